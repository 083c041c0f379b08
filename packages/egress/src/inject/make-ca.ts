import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { InjectionCa } from '../point/inject-credentials.js';

const run = promisify(execFile);

/**
 * makeInjectionCa generates an installation's egress CA: a P-256 key and a self-signed
 * certificate valid ten years, constrained to signing certificates (the egress point's leaves for
 * bound hosts; pathlen 0). The caller stores the key sealed (the control plane's keyring) and
 * never hands it to a sandbox; sandboxes get the certificate only. openssl does the work, as for
 * the leaves, so no crypto of ours is involved.
 */
export async function makeInjectionCa(commonName: string): Promise<InjectionCa> {
  const dir = await mkdtemp(join(tmpdir(), 'cubicle-egress-ca-new-'));
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.pem'),
      '-days',
      '3650',
      '-subj',
      `/CN=${commonName.replace(/[/\\]/g, ' ')}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE,pathlen:0',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    const [certPem, keyPem] = await Promise.all([
      readFile(join(dir, 'ca.pem'), 'utf8'),
      readFile(join(dir, 'ca.key'), 'utf8'),
    ]);
    return { certPem, keyPem };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
