import { parseArgs } from 'node:util';
import { ApiKeyId, ApiKeyRole, TenantId, TenantQuotas } from '@cubicle/contract/api';
import { z } from 'zod';

/** One operator command, parsed and validated. */
export type CliCommand =
  | { kind: 'help' }
  | { kind: 'tenant.create'; name: string; quotas: Partial<TenantQuotas>; json: boolean }
  | { kind: 'tenant.list'; json: boolean }
  | { kind: 'key.create'; tenantId: string; name: string; role: ApiKeyRole; json: boolean }
  | { kind: 'key.revoke'; keyId: string; json: boolean };

/** CliUsageError is a bad command line: the CLI prints it with the usage and exits 2. */
export class CliUsageError extends Error {}

export const USAGE = `usage: npm run cubicle -- <command> [--json]

  tenant create --name <name> [--max-pools N] [--max-sandboxes N]
                [--max-concurrent-claims N] [--requests-per-minute N]
  tenant list
  key create --tenant <ten_…> --name <name> --role admin|member
  key revoke <key_…>

Uses DATABASE_URL, or the embedded database under .cubicle/ when it is not set.`;

const quotaFlags = {
  'max-pools': 'max_pools',
  'max-sandboxes': 'max_sandboxes',
  'max-concurrent-claims': 'max_concurrent_claims',
  'requests-per-minute': 'requests_per_minute',
} as const;

function check<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new CliUsageError(`${flag}: ${result.error.issues[0]?.message ?? 'invalid'}`);
  }
  return result.data;
}

/** parseCliArgs turns argv (after the script name) into a command, or throws CliUsageError. */
export function parseCliArgs(argv: string[]): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        tenant: { type: 'string' },
        role: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        ...Object.fromEntries(Object.keys(quotaFlags).map((f) => [f, { type: 'string' as const }])),
      },
    });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  const json = values.json === true;
  const [noun, verb, ...rest] = positionals;
  if (values.help || noun === undefined || noun === 'help') return { kind: 'help' };
  const need = (flag: 'name' | 'tenant' | 'role') => {
    const v = values[flag];
    if (typeof v !== 'string') throw new CliUsageError(`--${flag} is required`);
    return v;
  };
  const noExtra = (n: number) => {
    if (rest.length > n) throw new CliUsageError(`unexpected argument: ${rest[n]}`);
  };

  switch (`${noun} ${verb ?? ''}`) {
    case 'tenant create': {
      noExtra(0);
      const quotas: Partial<TenantQuotas> = {};
      for (const [flag, field] of Object.entries(quotaFlags)) {
        const raw = values[flag as keyof typeof values];
        if (raw === undefined) continue;
        quotas[field] = check(
          TenantQuotas.shape[field],
          /^\d+$/.test(String(raw)) ? Number(raw) : raw,
          `--${flag}`,
        );
      }
      const name = check(z.string().trim().min(1).max(200), need('name'), '--name');
      return { kind: 'tenant.create', name, quotas, json };
    }
    case 'tenant list':
      noExtra(0);
      return { kind: 'tenant.list', json };
    case 'key create':
      noExtra(0);
      return {
        kind: 'key.create',
        tenantId: check(TenantId, need('tenant'), '--tenant'),
        name: check(z.string().trim().min(1).max(200), need('name'), '--name'),
        role: check(ApiKeyRole, need('role'), '--role'),
        json,
      };
    case 'key revoke':
      noExtra(1);
      return { kind: 'key.revoke', keyId: check(ApiKeyId, rest[0], 'key id'), json };
    default:
      throw new CliUsageError(`unknown command: ${positionals.join(' ')}`);
  }
}
