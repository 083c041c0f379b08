import type { Cubicle } from '../client.js';
import type { Run, RunEvent } from '../resources.js';
import { UsageError } from './args.js';
import {
  collect,
  flag,
  intOption,
  listOption,
  print,
  stringOption,
  table,
  when,
  type CommandSpec,
} from './command.js';
import { ExitCodes } from './exit-codes.js';
import type { Io } from './io.js';

const runRow = (r: Run) => [
  r.id,
  r.status,
  r.exit_code === null ? '-' : `exit ${r.exit_code}`,
  when(r.created_at),
  r.argv.join(' '),
];

/** writeEvent prints one event: NDJSON with --json, else output to stdout / stderr as it came. */
function writeEvent(io: Io, json: boolean, event: RunEvent) {
  if (json) io.stdout.write(`${JSON.stringify(event)}\n`);
  else if (event.type === 'stdout') io.stdout.write(String(event.data.text));
  else if (event.type === 'stderr') io.stderr.write(String(event.data.text));
}

/** follow prints a run's events live until it ends (or stdout's reader goes: `signal`). */
async function follow(cubicle: Cubicle, id: string, io: Io, json: boolean, signal: AbortSignal) {
  for await (const event of cubicle.runs.events(id, { signal })) writeEvent(io, json, event);
}

/** exitOf is a followed run's own exit code, as `cubicle shell` gives the command's. */
function exitOf(run: Run): number {
  if (run.exit_code !== null) return run.exit_code;
  return run.end_reason === 'timeout' ? 124 : ExitCodes.failure;
}

export const runCommands: CommandSpec[] = [
  {
    path: ['runs', 'start'],
    args: '<claim>',
    rest: '<argv…>',
    summary: 'start a program in the desktop; prints the run id (or its output with -f)',
    details:
      'With -f the output streams as it comes and the command exits with the run’s exit code.\n' +
      'Example: cubicle runs start clm_… -f --env MODE=fast -- python3 agent.py',
    options: {
      follow: { type: 'boolean', short: 'f', description: 'stream the output until the run ends' },
      cwd: { type: 'string', value: 'dir', description: 'working directory (absolute)' },
      env: {
        type: 'string',
        value: 'NAME=value',
        multiple: true,
        description: 'an environment variable (repeatable)',
      },
      secret: {
        type: 'string',
        value: 'NAME',
        multiple: true,
        description: 'a secret of the claim or a stored secret to expose (repeatable)',
      },
      timeout: { type: 'string', value: 'seconds', description: 'stop the run after this long' },
    },
    run: async ({ cubicle, args, io, json, signal }) => {
      const env: Record<string, string> = {};
      for (const pair of listOption(args, 'env')) {
        const eq = pair.indexOf('=');
        if (eq <= 0) throw new UsageError(`--env needs NAME=value, got ${pair}`);
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      const cwd = stringOption(args, 'cwd');
      const timeout = intOption(args, 'timeout');
      const run = await cubicle.runs.create(args.positionals[0]!, {
        argv: args.rest as [string, ...string[]],
        env,
        secrets: listOption(args, 'secret'),
        ...(cwd !== undefined ? { cwd } : {}),
        ...(timeout !== undefined ? { timeout_seconds: timeout } : {}),
      });
      if (!flag(args, 'follow')) {
        print(io, json, run, run.id);
        return ExitCodes.ok;
      }
      io.stderr.write(`run ${run.id}\n`);
      await follow(cubicle, run.id, io, json, signal);
      return exitOf(await cubicle.runs.get(run.id));
    },
  },
  {
    path: ['runs', 'logs'],
    args: '<run>',
    summary: "a run's output; -f follows it live",
    details: 'With --json: one event per line ({seq, type, data, at}), every type, in seq order.',
    options: {
      follow: { type: 'boolean', short: 'f', description: 'follow the output until the run ends' },
    },
    run: async ({ cubicle, args, io, json, signal }) => {
      const id = args.positionals[0]!;
      if (flag(args, 'follow')) {
        await follow(cubicle, id, io, json, signal);
        return ExitCodes.ok;
      }
      let after = 0;
      for (;;) {
        const page = await cubicle.runs.eventPage(
          id,
          { after_seq: after, limit: 1000 },
          { signal },
        );
        for (const event of page.data) writeEvent(io, json, event);
        if (page.data.length === 0 || page.complete) return ExitCodes.ok;
        after = page.next_after_seq;
      }
    },
  },
  {
    path: ['runs', 'ls'],
    args: '<claim>',
    summary: "list a claim's runs",
    run: async ({ cubicle, args, io, json }) => {
      const runs = await collect(cubicle.runs.list(args.positionals[0]!));
      print(io, json, runs, table(runs.map(runRow), '(no runs)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['runs', 'get'],
    args: '<run>',
    summary: 'show one run: status, exit code, timings',
    run: async ({ cubicle, args, io, json }) => {
      const run = await cubicle.runs.get(args.positionals[0]!);
      print(io, json, run, table([runRow(run)], ''));
      return ExitCodes.ok;
    },
  },
];
