import { createHash } from 'node:crypto';

/** How long a key is remembered; retries after that are new requests. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface IdempotencyInput {
  key: string;
  /** Method and route template, e.g. `POST /v1/pools/{name}/claims` plus the path values. */
  scope: string;
  /** The parsed request body; its canonical JSON is hashed. */
  body: unknown;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : 1,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}
