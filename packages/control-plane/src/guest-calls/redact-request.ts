/** Keys whose values may be secrets (typed text, set values, file contents); never stored. */
const SECRET_KEYS = new Set([
  'text',
  'value',
  'content',
  'data',
  'password',
  'secret',
  'token',
  'env',
  'stdin',
]);

export const REDACTED = '[redacted]';

/**
 * redactRequest copies a guest request for storage with every secret-looking value replaced by
 * `"[redacted]"`, at any depth. It is a denylist by key name: what an agent types may be a
 * password, and a stored action needs only the shape of what was asked.
 */
export function redactRequest(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactRequest);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEYS.has(k) && v !== undefined ? REDACTED : redactRequest(v);
  return out;
}
