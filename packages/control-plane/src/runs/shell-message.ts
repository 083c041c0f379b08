import { ShellStreamServerMessage } from '@cubicle/contract/guest';

/** The fields of an output chunk (ShellStreamServerMessage's stdout and stderr), no more. */
type OutputChunk = Extract<ShellStreamServerMessage, { type: 'stdout' | 'stderr' }>;

const isOutputChunk = (value: unknown): value is OutputChunk => {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    (m.type === 'stdout' || m.type === 'stderr') &&
    typeof m.data === 'string' &&
    Number.isSafeInteger(m.seq) &&
    (m.seq as number) >= 0 &&
    (m.encoding === 'utf8' || m.encoding === 'base64') &&
    Object.keys(m).length === 4
  );
};

/**
 * parseShellMessage reads one message of the guest's shell stream, or null when it is outside
 * the protocol. Output chunks, nearly every message of a chatty run, are checked by hand against
 * the same rules as the schema (exactly type, seq, data, encoding); the rest go through the
 * schema. The schema's parse per chunk was a visible part of the worker's cost per run event.
 */
export function parseShellMessage(text: string): ShellStreamServerMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (isOutputChunk(value)) return value;
  const parsed = ShellStreamServerMessage.safeParse(value);
  return parsed.success ? parsed.data : null;
}
