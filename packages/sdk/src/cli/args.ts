/** ParsedArgs: positionals, `--flag value` / `--flag=value` options, and what follows `--`. */
export interface ParsedArgs {
  positionals: string[];
  options: Map<string, string | true>;
  rest: string[];
}

/** Flags that never take a value. */
const BOOLEAN_FLAGS = new Set(['json', 'yes', 'y', 'follow', 'f', 'help', 'h', 'control', 'open']);

/** parseArgs reads argv without a library; unknown flags are kept for the command to refuse. */
export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  let rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    const long = /^--([a-z][a-z-]*)(?:=(.*))?$/.exec(arg);
    const short = /^-([a-z])$/.exec(arg);
    const name = long?.[1] ?? short?.[1];
    if (!name) {
      positionals.push(arg);
      continue;
    }
    if (long?.[2] !== undefined) options.set(name, long[2]);
    else if (BOOLEAN_FLAGS.has(name) && !(name === 'f' && isFileFlagContext(positionals)))
      options.set(name, true);
    else if (i + 1 < argv.length) options.set(name, argv[++i]!);
    else throw new UsageError(`--${name} needs a value`);
  }
  return { positionals, options, rest };
}

/** `-f` is a file in `pools apply -f pools.yaml` and "follow" in `runs logs -f`. */
function isFileFlagContext(positionals: string[]): boolean {
  return positionals[0] === 'pools' && positionals[1] === 'apply';
}

/** UsageError: the command line is wrong (exit code 2). */
export class UsageError extends Error {}
