import { isAppError } from '@cubicle/contract/errors';
import type { Db } from '@cubicle/db';
import { createApiKey, revokeApiKeyAsOperator } from '../api-keys.js';
import { createTenant, listTenants } from '../tenants.js';
import { CliUsageError, parseCliArgs, USAGE, type CliCommand } from './parse-cli-args.js';

export { CliUsageError, parseCliArgs, USAGE, type CliCommand };

export interface CliIo {
  /** Results go here (stdout): with --json, exactly one JSON document. */
  out: (line: string) => void;
  /** Usage and errors go here (stderr). */
  err: (line: string) => void;
}

/** needsDatabase says whether the command line will touch the database (help and typos do not). */
export function needsDatabase(argv: string[]): boolean {
  try {
    return parseCliArgs(argv).kind !== 'help';
  } catch {
    return false;
  }
}

async function execute(db: Db, command: CliCommand, io: CliIo): Promise<void> {
  const print = (json: boolean, value: unknown, human: string[]) => {
    if (json) io.out(JSON.stringify(value));
    else for (const line of human) io.out(line);
  };
  switch (command.kind) {
    case 'help':
      io.out(USAGE);
      return;
    case 'tenant.create': {
      const t = await createTenant(db, { name: command.name, quotas: command.quotas });
      const q = t.quotas;
      print(command.json, t, [
        `tenant ${t.id} (${t.name}) created`,
        `quotas: ${q.max_pools} pools, ${q.max_sandboxes} sandboxes, ${q.max_concurrent_claims} concurrent claims, ${q.requests_per_minute} requests/min per key`,
        `next: npm run cubicle -- key create --tenant ${t.id} --name admin --role admin`,
      ]);
      return;
    }
    case 'tenant.list': {
      const tenants = await listTenants(db);
      print(
        command.json,
        tenants,
        tenants.length === 0
          ? ['no tenants']
          : tenants.map((t) => `${t.id}  ${t.name}  (created ${t.created_at})`),
      );
      return;
    }
    case 'key.create': {
      const k = await createApiKey(db, command);
      print(command.json, k, [
        `api key ${k.id} (${k.name}, ${k.role}) for tenant ${command.tenantId}`,
        'the key is shown this once; store it now:',
        k.key,
      ]);
      return;
    }
    case 'key.revoke': {
      const k = await revokeApiKeyAsOperator(db, command.keyId);
      print(command.json, k, [`api key ${k.id} (${k.prefix}…) revoked at ${k.revoked_at}`]);
      return;
    }
    default:
      command satisfies never;
  }
}

/**
 * runTenancyCli runs one operator command against `db` and returns the exit code: 0 done,
 * 1 refused (e.g. unknown tenant), 2 bad command line. Unexpected errors propagate.
 */
export async function runTenancyCli(
  argv: string[],
  db: Db | undefined,
  io: CliIo,
): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCliArgs(argv);
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    io.err(`error: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  if (command.kind !== 'help' && !db) throw new Error('this command needs a database');
  try {
    await execute(db as Db, command, io);
    return 0;
  } catch (err) {
    if (!isAppError(err)) throw err;
    io.err(`error: ${err.message}`);
    return 1;
  }
}
