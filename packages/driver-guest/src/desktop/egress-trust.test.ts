// The browsers' side of credentials injected at egress: the egress CA, where a sandbox gets it
// (local bind, a Pod's guest Secret, a KubeVirt guest's cloud-init), goes into an NSS database
// with Debian's certutil (libnss3-tools, in desktop-packages.json) as a CA trusted for TLS
// servers, which is what Chromium (~/.pki/nssdb) and Firefox (its profile) read.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { trustEgressCaIn, userNssDb } from './egress-trust.js';

const work = mkdtempSync(join(tmpdir(), 'egress-trust-'));
const caPath = join(work, 'egress-ca.pem');
// A CA shaped like the installation's (CA:TRUE, keyCertSign), made here with openssl.
execFileSync('openssl', [
  'req',
  '-x509',
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:P-256',
  '-nodes',
  '-keyout',
  join(work, 'ca.key'),
  '-out',
  caPath,
  '-days',
  '1',
  '-subj',
  '/CN=Cubicle egress CA',
  '-addext',
  'basicConstraints=critical,CA:TRUE,pathlen:0',
  '-addext',
  'keyUsage=critical,keyCertSign,cRLSign',
]);
const list = (dir: string) =>
  execFileSync('certutil', ['-L', '-d', `sql:${dir}`], { encoding: 'utf8' });

describe('trustEgressCaIn', () => {
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('creates the user’s NSS database and trusts the CA for TLS servers (C,,)', async () => {
    const db = userNssDb(join(work, 'home'));
    expect(db).toBe(join(work, 'home', '.pki', 'nssdb'));
    expect(await trustEgressCaIn(db, caPath)).toBe(true);
    expect(list(db)).toMatch(/Cubicle egress CA\s+C,,/);
    // A desktop restarted on the same home adds it again without error (one entry).
    expect(await trustEgressCaIn(db, caPath)).toBe(true);
    expect(list(db).match(/Cubicle egress CA/g)).toHaveLength(1);
  });

  it('does nothing when the sandbox has no CA (no credentials injected at egress)', async () => {
    const db = join(work, 'no-ca');
    expect(await trustEgressCaIn(db, join(work, 'absent.pem'))).toBe(false);
  });
});
