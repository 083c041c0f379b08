import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import type { Claim } from '../claim-handle.js';
import {
  collect,
  flag,
  intOption,
  print,
  stringOption,
  table,
  type CommandSpec,
} from './command.js';
import { ExitCodes } from './exit-codes.js';
import { progress } from './io.js';

// The desktop commands: claim one, drive it, look at it, give it back; and list claims.

const claimRow = (c: Claim) => [
  c.id,
  c.status,
  c.pool,
  c.name,
  c.status === 'released' ? `released ${c.released_at}` : `expires ${c.expires_at}`,
];

export const claimCommands: CommandSpec[] = [
  {
    path: ['claim'],
    args: '<pool>',
    summary: 'claim a desktop; prints its id and a viewer link',
    options: {
      ttl: { type: 'string', value: 'seconds', description: 'how long the claim lives' },
      name: { type: 'string', value: 'name', description: 'a live claim of this name comes back' },
      wait: {
        type: 'string',
        value: 'seconds',
        description: 'wait this long for a desktop (default 20)',
      },
    },
    run: async ({ cubicle, args, io, json }) => {
      const pool = args.positionals[0]!;
      const ttl = intOption(args, 'ttl');
      const wait = intOption(args, 'wait') ?? 20;
      const name = stringOption(args, 'name');
      const handle = await cubicle.claims.create(pool, {
        ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
        ...(name !== undefined ? { name } : {}),
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
    },
  },
  {
    path: ['claims', 'ls'],
    summary: 'list claims, newest first',
    options: {
      pool: { type: 'string', value: 'pool', description: 'only this pool' },
      status: { type: 'string', value: 'status', description: 'pending, active or released' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const pool = stringOption(args, 'pool');
      const status = stringOption(args, 'status');
      const claims = await collect(
        cubicle.claims.list({
          ...(pool !== undefined ? { pool } : {}),
          ...(status !== undefined ? { status: status as Claim['status'] } : {}),
        }),
      );
      print(io, json, claims, table(claims.map(claimRow), '(no claims)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['claims', 'get'],
    args: '<claim>',
    summary: 'show one claim',
    run: async ({ cubicle, args, io, json }) => {
      const claim = (await cubicle.claims.get(args.positionals[0]!)).data;
      const human = [
        `id:       ${claim.id}`,
        `name:     ${claim.name}`,
        `pool:     ${claim.pool}`,
        `status:   ${claim.status}`,
        `sandbox:  ${claim.sandbox?.id ?? '-'}`,
        `created:  ${claim.created_at}`,
        `expires:  ${claim.expires_at}`,
        ...(claim.released_at ? [`released: ${claim.released_at} (${claim.release_reason})`] : []),
      ].join('\n');
      print(io, json, claim, human);
      return ExitCodes.ok;
    },
  },
  {
    path: ['shell'],
    args: '<claim>',
    rest: '<command…>',
    summary: "run a command; exits with the command's exit code (124 timed out)",
    details:
      'One word after -- is a shell command line (`-- "ls | wc -l"`); several are an argv, run as given.',
    options: {
      timeout: {
        type: 'string',
        value: 'seconds',
        description: 'stop the command after this long',
      },
    },
    run: async ({ cubicle, args, io, json }) => {
      const timeout = intOption(args, 'timeout');
      const body =
        args.rest.length === 1
          ? { command: args.rest[0]! }
          : { argv: args.rest as [string, ...string[]] };
      const result = await cubicle.claims.handle({ id: args.positionals[0]! } as Claim).shell({
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
    },
  },
  {
    path: ['screenshot'],
    args: '<claim> <out.png>',
    summary: 'save a screenshot of the desktop as PNG',
    run: async ({ cubicle, args, io, json }) => {
      const [id, out] = args.positionals as [string, string];
      const png = await cubicle.claims.handle({ id } as Claim).screenshot();
      writeFileSync(out, png);
      print(io, json, { path: out, bytes: png.byteLength }, `${out} (${png.byteLength} bytes)`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['view'],
    args: '<claim>',
    summary: 'mint a viewer ticket and print (or open) its link',
    options: {
      control: { type: 'boolean', description: 'a ticket that may also drive the desktop' },
      ttl: { type: 'string', value: 'seconds', description: 'how long the link works' },
      open: { type: 'boolean', description: 'open the link in a browser' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const ttl = intOption(args, 'ttl');
      const ticket = await cubicle.viewerTickets.create(args.positionals[0]!, {
        mode: flag(args, 'control') ? 'control' : 'view',
        ...(ttl !== undefined ? { ttl_seconds: ttl } : {}),
      });
      print(io, json, ticket, ticket.viewer_url);
      if (flag(args, 'open')) {
        const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
        spawn(opener, [ticket.viewer_url], { detached: true, stdio: 'ignore' })
          .on('error', () => io.stderr.write(`could not run ${opener}; open the link above\n`))
          .unref();
      }
      return ExitCodes.ok;
    },
  },
  {
    path: ['release'],
    args: '<claim>',
    summary: 'release a claim (its desktop is destroyed)',
    run: async ({ cubicle, args, io, json }) => {
      const released = await cubicle.claims.release(args.positionals[0]!);
      print(io, json, released, `released ${released.id}`);
      return ExitCodes.ok;
    },
  },
];
