import { Cubicle } from '../client.js';
import { CubicleError } from '../errors.js';
import { parseArgs, UsageError, type ParsedArgs } from './args.js';
import * as commands from './commands.js';
import { configPath, readConfig, writeConfig } from './config.js';
import { exitCodeOf, ExitCodes } from './exit-codes.js';
import { readLine, type Io } from './io.js';

export const USAGE = `cubicle: the Cubicle command line (operator tasks are \`npm run cubicle\` in the repository)

  cubicle login --url <api url> [--api-key <key>]   store url and key (0600) for later commands
  cubicle pools ls
  cubicle pools apply -f pools.yaml [--yes]         show the diff, then apply every pool in the file
  cubicle claim <pool> [--ttl s] [--name n] [--wait s]   claim a desktop; prints its id and a viewer link
  cubicle shell <claim> [--timeout s] -- <command…> run a command; exits with its exit code
  cubicle screenshot <claim> <out.png>
  cubicle view <claim> [--control] [--ttl s] [--open]    mint a viewer ticket and print (or open) its link
  cubicle release <claim>
  cubicle runs logs [-f] <run>                      a run's output; -f follows it live

Every command takes --json (one JSON document, or one per event for runs logs) and --url/--api-key
(else CUBICLE_URL / CUBICLE_API_KEY, else the login file). Progress goes to stderr.
Exit codes: 0 ok, 1 failure, 2 usage, 3 auth, 4 not found, 5 rejected by the API, 6 API unavailable,
7 pools apply not confirmed; cubicle shell: the command's own code (124 timed out).
`;

type Route = { path: string[]; run: commands.Command };
const ROUTES: Route[] = [
  { path: ['pools', 'ls'], run: commands.poolsLs },
  { path: ['pools', 'apply'], run: commands.poolsApply },
  { path: ['claim'], run: commands.claim },
  { path: ['shell'], run: commands.shell },
  { path: ['screenshot'], run: commands.screenshot },
  { path: ['view'], run: commands.view },
  { path: ['release'], run: commands.release },
  { path: ['runs', 'logs'], run: commands.runsLogs },
];

/** main runs one command line and returns its exit code (the bin sets process.exitCode). */
export async function main(argv: string[], io: Io): Promise<number> {
  let json = false;
  try {
    const args = parseArgs(argv);
    json = args.options.get('json') === true;
    if (args.positionals.length === 0 || args.options.has('help') || args.options.has('h')) {
      io.stdout.write(USAGE);
      return args.positionals.length === 0 && !args.options.has('help')
        ? ExitCodes.usage
        : ExitCodes.ok;
    }
    if (args.positionals[0] === 'login') return await login(args, io, json);
    const route = ROUTES.find((r) => r.path.every((p, i) => args.positionals[i] === p));
    if (!route) throw new UsageError(`unknown command: ${args.positionals.join(' ')}`);
    return await route.run({ cubicle: clientOf(args, io), args, io, json });
  } catch (error) {
    const code = exitCodeOf(error);
    reportError(io, json, error, code);
    return code;
  }
}

function clientOf(args: ParsedArgs, io: Io): Cubicle {
  const config = readConfig(io.env);
  const url = option(args, 'url') ?? io.env.CUBICLE_URL ?? config?.url;
  const apiKey = option(args, 'api-key') ?? io.env.CUBICLE_API_KEY ?? config?.api_key;
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

function option(args: ParsedArgs, name: string): string | undefined {
  const value = args.options.get(name);
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return value;
}

/** login checks the key against the API before storing it, so a typo fails now, not later. */
async function login(args: ParsedArgs, io: Io, json: boolean): Promise<number> {
  const url = option(args, 'url') ?? io.env.CUBICLE_URL ?? readConfig(io.env)?.url;
  if (!url) throw new UsageError('login needs --url <api url>');
  let apiKey = option(args, 'api-key') ?? io.env.CUBICLE_API_KEY;
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
}

function reportError(io: Io, json: boolean, error: unknown, code: number) {
  if (json) {
    const body =
      error instanceof CubicleError
        ? error.toJSON()
        : {
            error: {
              code: code === ExitCodes.usage ? 'usage' : 'failure',
              message: (error as Error).message,
            },
          };
    io.stdout.write(`${JSON.stringify({ ...body, exit_code: code })}\n`);
    return;
  }
  const detail =
    error instanceof CubicleError && error.requestId ? ` (request ${error.requestId})` : '';
  const prefix = error instanceof CubicleError ? `${error.code}: ` : '';
  io.stderr.write(`cubicle: ${prefix}${(error as Error).message}${detail}\n`);
  if (code === ExitCodes.usage) io.stderr.write('run `cubicle --help` for usage\n');
}

export { configPath };
