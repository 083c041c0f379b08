import { CubicleError } from '../errors.js';

/**
 * invalidAction is the error for a tool call the adapter cannot map: an unknown action, a
 * missing or malformed argument. Nothing was sent to the desktop. It is thrown rather than
 * returned, so a bug in the caller's loop is not fed back to the model as its own mistake; a
 * loop that wants the model to see it can catch `invalid_tool_action` and send the message.
 */
export function invalidAction(message: string, details: Record<string, unknown> = {}) {
  return new CubicleError({ code: 'invalid_tool_action', message, status: 0, details });
}

type Input = Record<string, unknown>;

/** asInput checks a tool call's input is a JSON object. */
export function asInput(value: unknown): Input {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalidAction('the tool input must be a JSON object', { input: value });
  return value as Input;
}

/** intOf reads an integer argument (numbers are rounded: models send 10.0). */
export function intOf(input: Input, key: string, opts: { min?: number; max?: number } = {}) {
  const v = input[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw invalidAction(`"${key}" must be a number`, { [key]: v });
  const n = Math.round(v);
  if ((opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max))
    throw invalidAction(`"${key}" must be between ${opts.min ?? '-∞'} and ${opts.max ?? '∞'}`, {
      [key]: v,
    });
  return n;
}

/** numberOf reads an optional number argument. */
export function numberOf(input: Input, key: string, fallback: number): number {
  const v = input[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw invalidAction(`"${key}" must be a non-negative number`, { [key]: v });
  return v;
}

/** stringOf reads a required string argument. */
export function stringOf(input: Input, key: string): string {
  const v = input[key];
  if (typeof v !== 'string' || v === '')
    throw invalidAction(`"${key}" must be a non-empty string`, { [key]: v });
  return v;
}

/** pointOf reads an `[x, y]` pair (Anthropic's `coordinate`). */
export function pointOf(input: Input, key: string): { x: number; y: number } {
  const v = input[key];
  if (!Array.isArray(v) || v.length !== 2)
    throw invalidAction(`"${key}" must be [x, y]`, { [key]: v });
  const pair = { x: v[0], y: v[1] };
  return { x: intOf(pair, 'x', { min: 0 }), y: intOf(pair, 'y', { min: 0 }) };
}
