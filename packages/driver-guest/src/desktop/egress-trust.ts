import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EGRESS_CA_PATH } from './sandbox-spec.js';

const run = promisify(execFile);
const NICKNAME = 'Cubicle egress CA';

/**
 * trustEgressCaIn adds Cubicle's egress CA (at `caPath`: EGRESS_CA_PATH, where a local sandbox,
 * a Pod's guest Secret and a KubeVirt guest's cloud-init put it when the sandbox's credentials
 * may be injected at egress) to the NSS database in `dir` as a CA trusted for TLS servers,
 * creating the database if needed. Browsers do not read the system bundle: Chromium on
 * Linux trusts its root store plus the user's NSS database (~/.pki/nssdb), Firefox its profile's.
 * false when there is no CA to add (no credentials at egress) or certutil (libnss3-tools) is
 * missing; a browser then refuses bound hosts' certificates, which is the safe side.
 */
export async function trustEgressCaIn(dir: string, caPath = EGRESS_CA_PATH): Promise<boolean> {
  if (!existsSync(caPath)) return false;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (!existsSync(join(dir, 'cert9.db')))
      await run('certutil', ['-N', '-d', `sql:${dir}`, '--empty-password']);
    await run('certutil', ['-A', '-d', `sql:${dir}`, '-n', NICKNAME, '-t', 'C,,', '-i', caPath]);
    return true;
  } catch {
    return false;
  }
}

/** userNssDb is the NSS database Chromium (and other NSS programs) read for a user. */
export const userNssDb = (home: string) => join(home, '.pki', 'nssdb');
