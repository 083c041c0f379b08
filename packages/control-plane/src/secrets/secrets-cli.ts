import type { Db } from '@cubicle/db';
import { parseKeyring } from '../crypto/keyring.js';
import { rewrapSecrets } from './rewrap-secrets.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const USAGE =
  'usage: cubicle secrets rewrap   (re-wraps every stored data key onto the newest key of CUBICLE_KEYRING)';

/**
 * runSecretsCli serves `cubicle secrets …`. `rewrap` moves every secret's data key onto the
 * keyring's first (newest) key and prints one JSON line with the counts; afterwards older keys can
 * be removed from CUBICLE_KEYRING. Returns the process exit code.
 */
export async function runSecretsCli(
  argv: readonly string[],
  db: Db,
  keyringSpec: string | undefined,
  io: CliIo,
): Promise<number> {
  if (argv[0] !== 'secrets' || argv[1] !== 'rewrap' || argv.length !== 2) {
    io.err(USAGE);
    return 2;
  }
  if (!keyringSpec) {
    io.err('CUBICLE_KEYRING is not set (and no .cubicle/keyring exists)');
    return 2;
  }
  const result = await rewrapSecrets(db, parseKeyring(keyringSpec));
  io.out(JSON.stringify(result));
  return 0;
}
