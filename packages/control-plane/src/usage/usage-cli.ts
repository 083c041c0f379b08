import { UsageQuery, usageToCsv } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { z } from 'zod';
import { exportUsage, totalsOf } from './query-usage.js';

interface Io {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = `usage: npm run cubicle -- usage export --from <ISO time> [--to <ISO time>] [--format csv|json] [--group-by pool|day|hour]
  Every tenant's rolled-up usage for hours starting in [from, to) (to defaults to now).`;

const Flags = z.strictObject({
  from: z.string(),
  to: z.string().optional(),
  format: z.enum(['csv', 'json']).default('csv'),
  'group-by': z.enum(['pool', 'day', 'hour']).default('day'),
});

/** parseFlags reads `--name value` pairs; anything else is an error. */
function parseFlags(args: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i];
    const value = args[i + 1];
    if (!name?.startsWith('--') || value === undefined) throw new Error(`unexpected ${name ?? ''}`);
    flags[name.slice(2)] = value;
  }
  return flags;
}

/**
 * runUsageCli is the operator's `usage export`: all tenants' usage as CSV or JSON on stdout.
 * Returns the exit code (2 for bad arguments, with the reason on stderr).
 */
export async function runUsageCli(argv: string[], db: Db, io: Io): Promise<number> {
  if (argv[0] !== 'usage' || argv[1] !== 'export') {
    io.err(USAGE);
    return 2;
  }
  let query: UsageQuery;
  let format: 'csv' | 'json';
  try {
    const flags = Flags.parse(parseFlags(argv.slice(2)));
    format = flags.format;
    query = UsageQuery.parse({
      from: flags.from,
      to: flags.to ?? new Date().toISOString(),
      group_by: flags['group-by'],
    });
  } catch (err) {
    const detail =
      err instanceof z.ZodError
        ? err.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')
        : String(err instanceof Error ? err.message : err);
    io.err(`${detail}\n${USAGE}`);
    return 2;
  }
  const { rows, rolledTo } = await exportUsage({ db }, query);
  if (format === 'csv') io.out(usageToCsv(rows).trimEnd());
  else
    io.out(
      JSON.stringify(
        {
          from: new Date(query.from).toISOString(),
          to: new Date(query.to).toISOString(),
          group_by: query.group_by,
          rolled_up_to: rolledTo ? rolledTo.toISOString() : null,
          rows,
          totals: totalsOf(rows),
        },
        null,
        2,
      ),
    );
  return 0;
}
