import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Cubicle } from '../client.js';
import { CubicleError } from '../errors.js';
import type { Pool } from '../resources.js';
import { UsageError, type ParsedArgs } from './args.js';
import { ExitCodes } from './exit-codes.js';
import { progress, readLine, type Io } from './io.js';
import { planChange, poolsOfFile, renderPlan } from './pools-file.js';

/** Command is one CLI command: it prints its result and returns the exit code. */
export type Command = (ctx: {
  cubicle: Cubicle;
  args: ParsedArgs;
  io: Io;
  json: boolean;
}) => Promise<number>;

const print = (io: Io, json: boolean, value: unknown, human: string) =>
  io.stdout.write(
    json ? `${JSON.stringify(value)}\n` : human.endsWith('\n') ? human : `${human}\n`,
  );

function positional(args: ParsedArgs, index: number, what: string): string {
  const value = args.positionals[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

function intOption(args: ParsedArgs, name: string): number | undefined {
  const value = args.options.get(name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value === true || !Number.isInteger(n) || n < 0)
    throw new UsageError(`--${name} must be a whole number`);
  return n;
}

export const poolsLs: Command = async ({ cubicle, io, json }) => {
  const pools: Pool[] = [];
  for await (const pool of cubicle.pools.list()) pools.push(pool);
  const rows = pools.map(
    (p) =>
      `${p.name.padEnd(24)} ${p.state.padEnd(9)} warm ${p.counts.warm}  claimed ${p.counts.claimed}  provisioning ${p.counts.provisioning}  min/max ${p.autoscaling.min}/${p.autoscaling.max}`,
  );
  print(io, json, pools, rows.length ? rows.join('\n') : '(no pools)');
  return ExitCodes.ok;
};

export const poolsApply: Command = async ({ cubicle, args, io, json }) => {
  const file = args.options.get('file') ?? args.options.get('f');
  if (typeof file !== 'string') throw new UsageError('pools apply needs -f <pools.yaml>');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  const wanted = poolsOfFile(text);
  const changes = await Promise.all(
    [...wanted].map(async ([name, spec]) => {
      const current = await cubicle.pools.get(name).catch((error: unknown) => {
        if (error instanceof CubicleError && error.code === 'not_found') return null;
        throw error;
      });
      return planChange(name, spec, current);
    }),
  );
  const pending = changes.filter((c) => c.action !== 'unchanged');
  // The plan goes to stderr in --json mode, so stdout stays one JSON document.
  (json ? io.stderr : io.stdout).write(renderPlan(changes));
  if (pending.length === 0) {
    if (json) print(io, json, { applied: [], changes }, '');
    return ExitCodes.ok;
  }
  if (args.options.get('yes') !== true && args.options.get('y') !== true) {
    if (io.stdin.isTTY !== true) {
      io.stderr.write('not applied: pass --yes to apply without asking\n');
      if (json) print(io, json, { applied: [], changes }, '');
      return ExitCodes.not_applied;
    }
    io.stderr.write(`apply ${pending.length} change(s)? [y/N] `);
    if (!/^y(es)?$/i.test(await readLine(io))) return ExitCodes.not_applied;
  }
  const applied: Pool[] = [];
  for (const change of pending) {
    io.stderr.write(`applying ${change.pool}…\n`);
    applied.push(await cubicle.pools.apply(change.pool, change.spec));
  }
  print(io, json, { applied, changes }, `applied ${applied.map((p) => p.name).join(', ')}`);
  return ExitCodes.ok;
};

export const claim: Command = async ({ cubicle, args, io, json }) => {
  const pool = positional(args, 1, 'pool name: cubicle claim <pool>');
  const ttl = intOption(args, 'ttl');
  const wait = intOption(args, 'wait') ?? 20;
  const name = args.options.get('name');
  const handle = await cubicle.claims.create(pool, {
    ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
    ...(typeof name === 'string' ? { name } : {}),
    wait_seconds: Math.min(wait, 120),
  });
  if (handle.data.status === 'pending') {
    const stop = progress(io, `waiting for a desktop in pool ${pool} (claim ${handle.id})`);
    try {
      await handle.waitUntilActive({ intervalMs: 1000 });
    } finally {
      stop();
    }
  }
  const ticket =
    handle.data.status === 'active' ? await handle.viewerTicket({ mode: 'view' }) : null;
  print(
    io,
    json,
    { claim: handle.data, viewer_url: ticket?.viewer_url ?? null },
    `${handle.id}\n${ticket ? `viewer: ${ticket.viewer_url}` : `status: ${handle.data.status}`}`,
  );
  return handle.data.status === 'active' ? ExitCodes.ok : ExitCodes.failure;
};

export const shell: Command = async ({ cubicle, args, io, json }) => {
  const id = positional(args, 1, 'claim id: cubicle shell <claim> -- <command>');
  if (args.rest.length === 0) throw new UsageError('missing command after --');
  const timeout = intOption(args, 'timeout');
  // One word is a shell command line (`-- 'ls | wc -l'`); several are an argv, run as given.
  const body =
    args.rest.length === 1
      ? { command: args.rest[0]! }
      : { argv: args.rest as [string, ...string[]] };
  const result = await (
    await cubicle.claims.get(id)
  ).shell({
    ...body,
    ...(timeout !== undefined ? { timeout_ms: timeout * 1000 } : {}),
  });
  if (json) print(io, json, result, '');
  else {
    io.stdout.write(result.stdout);
    io.stderr.write(result.stderr);
  }
  if (result.timed_out) return 124;
  return result.exit_code ?? 128;
};

export const screenshot: Command = async ({ cubicle, args, io, json }) => {
  const id = positional(args, 1, 'claim id: cubicle screenshot <claim> <out.png>');
  const out = positional(args, 2, 'output file: cubicle screenshot <claim> <out.png>');
  const png = await cubicle.claims.handle({ id } as never).screenshot();
  writeFileSync(out, png);
  print(io, json, { path: out, bytes: png.byteLength }, `${out} (${png.byteLength} bytes)`);
  return ExitCodes.ok;
};

export const view: Command = async ({ cubicle, args, io, json }) => {
  const id = positional(args, 1, 'claim id: cubicle view <claim>');
  const mode = args.options.get('control') === true ? 'control' : 'view';
  const ttl = intOption(args, 'ttl');
  const ticket = await cubicle.viewerTickets.create(id, {
    mode,
    ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
  });
  print(io, json, ticket, ticket.viewer_url);
  if (args.options.get('open') === true) {
    const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
    spawn(opener, [ticket.viewer_url], { detached: true, stdio: 'ignore' })
      .on('error', () => io.stderr.write(`could not run ${opener}; open the link above\n`))
      .unref();
  }
  return ExitCodes.ok;
};

export const release: Command = async ({ cubicle, args, io, json }) => {
  const id = positional(args, 1, 'claim id: cubicle release <claim>');
  const released = await cubicle.claims.release(id);
  print(io, json, released, `released ${released.id}`);
  return ExitCodes.ok;
};

export const runsLogs: Command = async ({ cubicle, args, io, json }) => {
  const id = positional(args, 2, 'run id: cubicle runs logs [-f] <run>');
  const follow = args.options.get('follow') === true || args.options.get('f') === true;
  const write = (event: { type: string; data: Record<string, unknown> }) => {
    if (json) io.stdout.write(`${JSON.stringify(event)}\n`);
    else if (event.type === 'stdout') io.stdout.write(String(event.data.text));
    else if (event.type === 'stderr') io.stderr.write(String(event.data.text));
  };
  if (follow) {
    for await (const event of cubicle.runs.events(id)) write(event);
    return ExitCodes.ok;
  }
  let after = 0;
  for (;;) {
    const page = await cubicle.runs.eventPage(id, { after_seq: after, limit: 1000 });
    for (const event of page.data) write(event);
    if (page.data.length === 0 || page.complete) return ExitCodes.ok;
    after = page.next_after_seq;
  }
};
