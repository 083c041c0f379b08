import { parseArgs as nodeParseArgs } from 'node:util';

/** OptionDef declares one flag of a command: its type, short form and the help line. */
export interface OptionDef {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in help (`--ttl <seconds>`); string options only. */
  value?: string;
  /** The flag may be given more than once (`--env A=1 --env B=2`). */
  multiple?: boolean;
  description: string;
}

export type OptionDefs = Record<string, OptionDef>;

/** ParsedArgs: a command's positionals (command words removed), its flags, and what follows `--`. */
export interface ParsedArgs {
  positionals: string[];
  options: Record<string, string | boolean | string[] | undefined>;
  rest: string[];
}

/**
 * parseCommandLine reads `argv` (without the command words) with node:util's parseArgs in strict
 * mode: a flag the command does not declare is a usage error naming the closest one it does, so
 * a typo (`--tl 60`) never runs the command with a default in its place.
 */
export function parseCommandLine(argv: string[], options: OptionDefs): ParsedArgs {
  const dash = argv.indexOf('--');
  const head = dash < 0 ? argv : argv.slice(0, dash);
  const rest = dash < 0 ? [] : argv.slice(dash + 1);
  const config = Object.fromEntries(
    Object.entries(options).map(([name, o]) => [
      name,
      {
        type: o.type,
        ...(o.short ? { short: o.short } : {}),
        ...(o.multiple ? { multiple: true } : {}),
      },
    ]),
  );
  try {
    const { values, positionals } = nodeParseArgs({
      args: head,
      options: config,
      strict: true,
      allowPositionals: true,
    });
    return { positionals, options: values as ParsedArgs['options'], rest };
  } catch (error) {
    throw new UsageError(describeParseError(error as Error & { code?: string }, options));
  }
}

/** describeParseError rewords node's parse errors as one short line, with a suggestion. */
function describeParseError(error: Error & { code?: string }, options: OptionDefs): string {
  const unknown = /Unknown option '([^']+)'/.exec(error.message)?.[1];
  if (unknown) {
    const names = Object.keys(options).map((n) => `--${n}`);
    const hint = closest(unknown.startsWith('--') ? unknown : `-${unknown}`, names);
    return `unknown flag ${unknown}${hint ? `; did you mean ${hint}?` : ''}`;
  }
  const missing = /Option '([^']*)' argument missing/.exec(error.message)?.[1];
  if (missing) return `${longName(flagIn(missing), options)} needs a value`;
  const noValue = /Option '(-[^' ]+)' does not take an argument/.exec(error.message)?.[1];
  if (noValue) return `${noValue} takes no value`;
  const ambiguous = /Option '(-[^' ]+)' argument is ambiguous/.exec(error.message)?.[1];
  if (ambiguous)
    return `${longName(ambiguous, options)} needs a value (write ${ambiguous}=-… for a value that starts with -)`;
  return error.message.split('\n')[0]!;
}

/** flagIn picks the flag out of node's `-f, --file <value>`. */
function flagIn(text: string): string {
  return /--[\w-]+/.exec(text)?.[0] ?? /-\w/.exec(text)?.[0] ?? text;
}

/** `-f` in an error reads better as `--file` (the help lists the long names). */
function longName(flag: string, options: OptionDefs): string {
  if (flag.startsWith('--')) return flag;
  const entry = Object.entries(options).find(([, o]) => `-${o.short}` === flag);
  return entry ? `--${entry[0]}` : flag;
}

/**
 * closest returns the candidate nearest to `word` by edit distance, when near enough to be a
 * typo (at most 2 edits, and fewer than half the word's letters).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = editDistance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const letters = word.replace(/^-+/, '').length;
  return bestDistance <= 2 && bestDistance < Math.max(2, letters / 2) ? best : undefined;
}

/** editDistance: Levenshtein distance with adjacent transpositions counted as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** UsageError: the command line or an input file is wrong (exit code 2). */
export class UsageError extends Error {}
