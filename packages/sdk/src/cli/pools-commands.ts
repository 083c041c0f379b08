import { readFileSync } from 'node:fs';
import type { Cubicle } from '../client.js';
import { CubicleError } from '../errors.js';
import type { Pool } from '../resources.js';
import { UsageError, type ParsedArgs } from './args.js';
import { collect, flag, print, stringOption, table, type CommandSpec } from './command.js';
import { ExitCodes } from './exit-codes.js';
import { readLine, type Io } from './io.js';
import { planChange, readPoolsFile, renderPlan, type PoolChange } from './pools-file.js';

const poolRow = (p: Pool) => [
  p.name,
  p.state,
  `warm ${p.counts.warm}`,
  `claimed ${p.counts.claimed}`,
  `provisioning ${p.counts.provisioning}`,
  `min/max ${p.autoscaling.min}/${p.autoscaling.max}`,
];

const FILE_OPTION = {
  file: { type: 'string', short: 'f', value: 'pools.yaml', description: 'the pools file' },
} as const;

/**
 * plan reads and validates the whole file, then compares each pool with the API's. Nothing is
 * written: a file that does not parse or validate stops here with every problem listed.
 */
async function plan(cubicle: Cubicle, args: ParsedArgs): Promise<PoolChange[]> {
  const file = stringOption(args, 'file');
  if (file === undefined) throw new UsageError('needs -f <pools.yaml>');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  const wanted = await readPoolsFile(text);
  return Promise.all(
    wanted.map(async (w) => {
      const current = await cubicle.pools.get(w.name).catch((error: unknown) => {
        if (error instanceof CubicleError && error.code === 'not_found') return null;
        throw error;
      });
      return planChange(w, current);
    }),
  );
}

/** showPlan prints the plan; in --json mode to stderr, so stdout stays one JSON document. */
function showPlan(io: Io, json: boolean, changes: PoolChange[]) {
  (json ? io.stderr : io.stdout).write(renderPlan(changes));
}

export const poolCommands: CommandSpec[] = [
  {
    path: ['pools', 'ls'],
    summary: 'list pools with their sandbox counts',
    run: async ({ cubicle, io, json }) => {
      const pools = await collect(cubicle.pools.list());
      print(io, json, pools, table(pools.map(poolRow), '(no pools)'));
      return ExitCodes.ok;
    },
  },
  {
    path: ['pools', 'get'],
    args: '<pool>',
    summary: 'show one pool: its spec and sandbox counts',
    run: async ({ cubicle, args, io, json }) => {
      const pool = await cubicle.pools.get(args.positionals[0]!);
      const { counts, ...rest } = pool;
      const human = [
        ...Object.entries(rest).map(([k, v]) => `${`${k}:`.padEnd(28)} ${JSON.stringify(v)}`),
        `${'counts:'.padEnd(28)} ${Object.entries(counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      ].join('\n');
      print(io, json, pool, human);
      return ExitCodes.ok;
    },
  },
  {
    path: ['pools', 'plan'],
    summary: 'show what `pools apply` would change (create/update/unchanged), change nothing',
    options: FILE_OPTION,
    run: async ({ cubicle, args, io, json }) => {
      const changes = await plan(cubicle, args);
      showPlan(io, json, changes);
      if (json) print(io, json, { applied: [], changes }, '');
      return ExitCodes.ok;
    },
  },
  {
    path: ['pools', 'apply'],
    summary: 'validate every pool of the file, show the plan, then apply it',
    details:
      'The whole file is parsed and every pool validated before anything changes; a broken file\n' +
      'or one invalid pool changes nothing. Without --yes it asks on a terminal, and elsewhere\n' +
      'exits 7 after the plan.',
    options: {
      ...FILE_OPTION,
      yes: { type: 'boolean', short: 'y', description: 'apply without asking' },
      'dry-run': { type: 'boolean', description: 'show the plan only (as `pools plan`)' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const changes = await plan(cubicle, args);
      const pending = changes.filter((c) => c.action !== 'unchanged');
      showPlan(io, json, changes);
      const none = () => {
        if (json) print(io, json, { applied: [], changes }, '');
      };
      if (pending.length === 0 || flag(args, 'dry-run')) {
        none();
        return ExitCodes.ok;
      }
      if (!flag(args, 'yes')) {
        if (io.stdin.isTTY !== true) {
          io.stderr.write('not applied: pass --yes to apply without asking\n');
          none();
          return ExitCodes.not_applied;
        }
        io.stderr.write(`apply ${pending.length} change(s)? [y/N] `);
        if (!/^y(es)?$/i.test(await readLine(io))) return ExitCodes.not_applied;
      }
      const applied: Pool[] = [];
      for (const change of pending) {
        io.stderr.write(`applying ${change.pool}…\n`);
        try {
          applied.push(await cubicle.pools.apply(change.pool, change.spec));
        } catch (error) {
          // The file was valid, the API still refused (a quota, a conflict): say what stands.
          const done = applied.map((p) => p.name).join(', ') || 'none';
          io.stderr.write(`pool ${change.pool} was refused; applied before it: ${done}\n`);
          throw error;
        }
      }
      print(io, json, { applied, changes }, `applied ${applied.map((p) => p.name).join(', ')}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['pools', 'delete'],
    args: '<pool>',
    summary: 'drain and delete a pool: live claims run to their end, warm desktops go',
    run: async ({ cubicle, args, io, json }) => {
      const pool = await cubicle.pools.delete(args.positionals[0]!);
      print(io, json, pool, `deleting ${pool.name} (${pool.state})`);
      return ExitCodes.ok;
    },
  },
];
