import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseViewerKeys } from '@cubicle/viewer';
import { viewerKeysFromPem, withViewerKeysFromPem } from './viewer-key-pem.js';

const pem = (type: 'ed25519' | 'ec' = 'ed25519') =>
  generateKeyPairSync(
    type as 'ed25519',
    type === 'ec' ? ({ namedCurve: 'P-256' } as never) : undefined,
  )
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

describe('viewer keys from a PEM key (the Helm chart generates one)', () => {
  it('makes a JWK set the API accepts; tickets signed by one replica verify on another', async () => {
    const key = pem();
    const a = parseViewerKeys(viewerKeysFromPem(key));
    const b = parseViewerKeys(viewerKeysFromPem(key));
    expect(a.signingKid).toBe(b.signingKid);
    const claims = {
      jti: 'vtk_01hzy3m9v0k6r7x8q2w4e5t6y7',
      tnt: 'ten_01hzy3m9v0k6r7x8q2w4e5t6y7',
      clm: 'clm_01hzy3m9v0k6r7x8q2w4e5t6y7',
      sbx: 'sbx_01hzy3m9v0k6r7x8q2w4e5t6y7',
      mode: 'view' as const,
      iat: 1_800_000_000,
      exp: 1_800_003_600,
    };
    expect(await b.verify(await a.sign(claims))).toEqual(claims);
    // A different key's replica refuses it.
    const other = parseViewerKeys(viewerKeysFromPem(pem()));
    expect(await other.verify(await a.sign(claims))).toBeNull();
  });

  it('keeps several keys in order (the first signs) and refuses a non-Ed25519 or empty PEM', () => {
    const [k1, k2] = [pem(), pem()];
    const set = JSON.parse(viewerKeysFromPem(`${k1}\n${k2}`)) as { keys: { kid: string }[] };
    expect(set.keys).toHaveLength(2);
    expect(set.keys[0]!.kid).toBe(parseViewerKeys(viewerKeysFromPem(k1)).signingKid);
    expect(() => viewerKeysFromPem(pem('ec'))).toThrow(/Ed25519/);
    expect(() => viewerKeysFromPem('nothing')).toThrow(/no PKCS#8/);
  });

  it('leaves an explicit CUBICLE_VIEWER_KEYS alone', () => {
    const env = { CUBICLE_VIEWER_KEYS: '{"keys":[]}', CUBICLE_VIEWER_KEY_PEM: pem() };
    expect(withViewerKeysFromPem(env)).toBe(env);
    expect(withViewerKeysFromPem({ CUBICLE_VIEWER_KEY_PEM: pem() }).CUBICLE_VIEWER_KEYS).toMatch(
      /"crv":"Ed25519"/,
    );
  });
});
