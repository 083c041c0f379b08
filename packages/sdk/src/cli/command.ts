import type { Cubicle } from '../client.js';
import { UsageError, type OptionDefs, type ParsedArgs } from './args.js';
import type { Io } from './io.js';

/** Context is what a command runs with; `signal` aborts it when stdout's reader has gone. */
export interface Context {
  cubicle: Cubicle;
  args: ParsedArgs;
  io: Io;
  json: boolean;
  signal: AbortSignal;
}

/** Command is one CLI command: it prints its result and returns the exit code. */
export type Command = (ctx: Context) => Promise<number>;

/**
 * CommandSpec declares a command: its words, its arguments as help shows them (`<x>` required,
 * `[x]` optional, `<x…>` any number), its flags, and what it does. main parses and checks the
 * command line against it before the command runs, and renders `--help` from it.
 */
export interface CommandSpec {
  path: readonly string[];
  args?: string;
  /** `-- <command…>`: the command takes what follows `--` (required when named in `<>`). */
  rest?: string;
  summary: string;
  /** More help: examples, what is printed. */
  details?: string;
  options?: OptionDefs;
  run: Command;
}

/** GLOBAL_OPTIONS: every command takes these. */
export const GLOBAL_OPTIONS: OptionDefs = {
  json: { type: 'boolean', description: 'print one JSON document (one per line for streams)' },
  url: { type: 'string', value: 'url', description: 'the API (else CUBICLE_URL, else login)' },
  'api-key': {
    type: 'string',
    value: 'key',
    description: 'the API key (else CUBICLE_API_KEY, else login)',
  },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

/** arity reads how many positionals a spec's `args` allows. */
export function arity(spec: CommandSpec): { min: number; max: number } {
  const words = spec.args?.split(/\s+/).filter(Boolean) ?? [];
  const min = words.filter((w) => w.startsWith('<')).length;
  const isVariadic = words.some((w) => w.endsWith('…>') || w.endsWith('…]'));
  return { min, max: isVariadic ? Infinity : words.length };
}

export function print(io: Io, json: boolean, value: unknown, human: string) {
  io.stdout.write(
    json ? `${JSON.stringify(value)}\n` : human.endsWith('\n') ? human : `${human}\n`,
  );
}

/** table renders rows as aligned columns (the last column is not padded). */
export function table(rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options[name];
  return typeof value === 'string' ? value : undefined;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options[name] === true;
}

export function listOption(args: ParsedArgs, name: string): string[] {
  const value = args.options[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
}

/** intOption reads a whole, non-negative number flag. */
export function intOption(args: ParsedArgs, name: string): number | undefined {
  const value = stringOption(args, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n))
    throw new UsageError(`--${name} must be a whole number`);
  return n;
}

/** collect drains a list iterator (every page) into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** when prints an optional timestamp in a table. */
export const when = (t: string | null | undefined) => t ?? '-';
