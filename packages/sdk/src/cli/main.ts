import { readFileSync } from 'node:fs';
import { Cubicle } from '../client.js';
import { CubicleError } from '../errors.js';
import { adminCommands } from './admin-commands.js';
import { closest, parseCommandLine, UsageError, type ParsedArgs } from './args.js';
import { arity, GLOBAL_OPTIONS, stringOption, type CommandSpec, type Context } from './command.js';
import { claimCommands } from './commands.js';
import { configPath, readConfig, writeConfig } from './config.js';
import { exitCodeOf, ExitCodes } from './exit-codes.js';
import { fileCommands } from './files-commands.js';
import { commandHelp, groupHelp, usage } from './help.js';
import { readLine, watchStdout, type Io } from './io.js';
import { poolCommands } from './pools-commands.js';
import { PoolsFileError } from './pools-file.js';
import { runCommands } from './runs-commands.js';

/** login checks the key against the API before storing it, so a typo fails now, not later. */
const login: CommandSpec = {
  path: ['login'],
  summary: 'check an API key and store url and key (0600) for later commands',
  details: 'Without --api-key (or CUBICLE_API_KEY) the key is read from stdin.',
  run: async ({ args, io, json }) => {
    const url = stringOption(args, 'url') ?? io.env.CUBICLE_URL ?? readConfig(io.env)?.url;
    if (!url) throw new UsageError('login needs --url <api url>');
    let apiKey = stringOption(args, 'api-key') ?? io.env.CUBICLE_API_KEY;
    if (!apiKey) {
      io.stderr.write('API key: ');
      apiKey = await readLine(io);
    }
    if (!apiKey) throw new UsageError('no API key given');
    const cubicle = new Cubicle({ baseUrl: url, apiKey });
    await cubicle.transport.call('listPools', { query: { limit: 1 } });
    const path = writeConfig(io.env, { url, api_key: apiKey });
    const result = { url, config: path };
    io.stdout.write(
      json ? `${JSON.stringify(result)}\n` : `logged in to ${url} (key stored in ${path})\n`,
    );
    return ExitCodes.ok;
  },
};

/** COMMANDS: every command, in the order `cubicle --help` lists them. */
export const COMMANDS: CommandSpec[] = [
  login,
  ...poolCommands,
  ...claimCommands,
  ...runCommands,
  ...fileCommands,
  ...adminCommands,
];
const GROUPS = new Set(COMMANDS.filter((c) => c.path.length > 1).map((c) => c.path[0]!));
const TOP_WORDS = [...new Set(COMMANDS.map((c) => c.path[0]!))];

export const USAGE = usage(COMMANDS);

/** version is the SDK's, from its package.json (two levels up from src/cli and dist/cli). */
export function version(): string {
  const pkg = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
}

/** main runs one command line and returns its exit code (the bin sets process.exitCode). */
export async function main(argv: string[], io: Io): Promise<number> {
  const stdout = watchStdout(io);
  const dash = argv.indexOf('--');
  const head = dash < 0 ? argv : argv.slice(0, dash);
  let json = head.includes('--json');
  let helpHint = 'cubicle --help';
  try {
    const { words, others } = splitCommandWords(head);
    const isHelp = others.includes('--help') || others.includes('-h');
    if (words.length === 0) {
      if (others.includes('--version')) {
        io.stdout.write(json ? `${JSON.stringify({ version: version() })}\n` : `${version()}\n`);
        return ExitCodes.ok;
      }
      io.stdout.write(USAGE);
      return isHelp ? ExitCodes.ok : ExitCodes.usage;
    }
    if (words[0] === 'help')
      return help(
        [...words, ...others].slice(1).filter((w) => !w.startsWith('-')),
        io,
      );
    const spec = COMMANDS.find(
      (c) => c.path.length === words.length && c.path.every((w, i) => words[i] === w),
    );
    if (!spec) return unknownCommand(words, isHelp, io);
    helpHint = `cubicle ${spec.path.join(' ')} --help`;
    if (isHelp) {
      io.stdout.write(commandHelp(spec));
      return ExitCodes.ok;
    }
    const args = parseCommandLine(dash < 0 ? others : [...others, ...argv.slice(dash)], {
      ...GLOBAL_OPTIONS,
      ...spec.options,
    });
    json = args.options.json === true;
    checkArguments(spec, args);
    let client: Cubicle | undefined;
    const ctx: Context = {
      get cubicle() {
        return (client ??= clientOf(args, io));
      },
      args,
      io,
      json,
      signal: stdout.signal,
    };
    const code = await spec.run(ctx);
    if (stdout.failure()) throw stdout.failure();
    return stdout.isGone() ? ExitCodes.ok : code;
  } catch (error) {
    // The reader of stdout left (`| head`): what it wanted was printed; nothing is wrong.
    if (stdout.isGone()) return ExitCodes.ok;
    const code = exitCodeOf(error);
    reportError(io, json, error, code, helpHint);
    return code;
  }
}

/**
 * splitCommandWords takes the command's words (`pools apply`) out of the command line: the first
 * word, and a second when the first names a group. Flags may come before them; the values of
 * the global string flags (`--url <url>`) are not words.
 */
function splitCommandWords(head: string[]): { words: string[]; others: string[] } {
  const words: string[] = [];
  const others: string[] = [];
  for (let i = 0; i < head.length; i++) {
    const token = head[i]!;
    const isWordSlot = words.length === 0 || (words.length === 1 && GROUPS.has(words[0]!));
    if (token.startsWith('-')) {
      others.push(token);
      if (isWordSlot && (token === '--url' || token === '--api-key') && i + 1 < head.length)
        others.push(head[++i]!);
    } else if (isWordSlot) words.push(token);
    else others.push(token);
  }
  return { words, others };
}

function checkArguments(spec: CommandSpec, args: ParsedArgs) {
  const { min, max } = arity(spec);
  const names = spec.args?.split(/\s+/) ?? [];
  if (args.positionals.length < min)
    throw new UsageError(
      `missing ${names[args.positionals.length]} (${spec.path.join(' ')} ${spec.args})`,
    );
  if (args.positionals.length > max)
    throw new UsageError(`unexpected argument ${args.positionals[max]}`);
  if (spec.rest?.startsWith('<') && args.rest.length === 0)
    throw new UsageError(`missing -- ${spec.rest}`);
  if (!spec.rest && args.rest.length > 0)
    throw new UsageError(`${spec.path.join(' ')} takes nothing after --`);
}

/** help answers `cubicle help [command…]`. */
function help(words: string[], io: Io): number {
  const spec = COMMANDS.find(
    (c) => c.path.length === words.length && c.path.every((w, i) => words[i] === w),
  );
  if (spec) io.stdout.write(commandHelp(spec));
  else if (words.length === 1 && GROUPS.has(words[0]!))
    io.stdout.write(groupHelp(words[0]!, COMMANDS));
  else if (words.length === 0) io.stdout.write(USAGE);
  else throw new UsageError(`no command ${words.join(' ')}`);
  return ExitCodes.ok;
}

function unknownCommand(words: string[], isHelp: boolean, io: Io): number {
  const [group, sub] = words as [string, string | undefined];
  if (GROUPS.has(group)) {
    if (sub === undefined) {
      io.stdout.write(groupHelp(group, COMMANDS));
      return isHelp ? ExitCodes.ok : ExitCodes.usage;
    }
    const subs = COMMANDS.filter((c) => c.path[0] === group).map((c) => c.path[1]!);
    const hint = closest(sub, subs);
    throw new UsageError(
      `unknown command ${group} ${sub}${hint ? `; did you mean ${group} ${hint}?` : ''}`,
    );
  }
  const hint = closest(group, TOP_WORDS);
  throw new UsageError(`unknown command ${group}${hint ? `; did you mean ${hint}?` : ''}`);
}

function clientOf(args: ParsedArgs, io: Io): Cubicle {
  const config = readConfig(io.env);
  const url = stringOption(args, 'url') ?? io.env.CUBICLE_URL ?? config?.url;
  const apiKey = stringOption(args, 'api-key') ?? io.env.CUBICLE_API_KEY ?? config?.api_key;
  if (!url || !apiKey) {
    throw new CubicleError({
      code: 'unauthenticated',
      message:
        'not logged in: run `cubicle login --url <api url>` (or set CUBICLE_URL and CUBICLE_API_KEY)',
      status: 401,
    });
  }
  return new Cubicle({ baseUrl: url, apiKey });
}

/** issuesOf lists a refused request's fields: `details.issues` of a `validation_failed` answer. */
function issuesOf(error: unknown): string[] {
  if (error instanceof PoolsFileError) return error.problems;
  if (!(error instanceof CubicleError)) return [];
  const issues = error.details?.issues;
  if (!Array.isArray(issues)) return [];
  return issues.map((raw) => {
    const i = raw as { location?: string; path?: string; message?: string };
    const field = [i.location, i.path].filter(Boolean).join('.') || '(request)';
    return `${field}: ${i.message ?? 'invalid'}`;
  });
}

function reportError(io: Io, json: boolean, error: unknown, code: number, helpHint: string) {
  if (json) {
    const body =
      error instanceof CubicleError
        ? error.toJSON()
        : {
            error: {
              code: code === ExitCodes.usage ? 'usage' : 'failure',
              message: (error as Error).message,
              ...(error instanceof PoolsFileError ? { details: { problems: error.problems } } : {}),
            },
          };
    io.stdout.write(`${JSON.stringify({ ...body, exit_code: code })}\n`);
    return;
  }
  const detail =
    error instanceof CubicleError && error.requestId ? ` (request ${error.requestId})` : '';
  const prefix = error instanceof CubicleError ? `${error.code}: ` : '';
  io.stderr.write(`cubicle: ${prefix}${(error as Error).message}${detail}\n`);
  // A pools file's problems are already in its message; an API's field list is not.
  if (error instanceof CubicleError)
    for (const line of issuesOf(error)) io.stderr.write(`  ${line}\n`);
  if (code === ExitCodes.usage && !(error instanceof PoolsFileError))
    io.stderr.write(`run \`${helpHint}\` for usage\n`);
}

export { configPath };
