import { describe, expect, it } from 'vitest';
import { generateViewerKeySet, parseViewerKeys } from './viewer-keys.js';

const claims = {
  jti: 'vtk_01hzy3m9v0k6r7x8q2w4e5t6y7',
  tnt: 'ten_01hzy3m9v0k6r7x8q2w4e5t6y7',
  clm: 'clm_01hzy3m9v0k6r7x8q2w4e5t6y7',
  sbx: 'sbx_01hzy3m9v0k6r7x8q2w4e5t6y7',
  mode: 'view' as const,
  iat: 1_800_000_000,
  exp: 1_800_003_600,
};

const keysOf = (json: string) => JSON.parse(json).keys as Record<string, string>[];

describe('viewer keys', () => {
  it('sign an EdDSA JWS with the signing kid that verify returns the claims of', async () => {
    const keys = parseViewerKeys(generateViewerKeySet('k1'));
    const ticket = await keys.sign(claims);
    const header = JSON.parse(Buffer.from(ticket.split('.')[0]!, 'base64url').toString());
    expect(header).toEqual({ alg: 'EdDSA', typ: 'cubicle-viewer+jwt', kid: 'k1' });
    expect(await keys.verify(ticket)).toEqual(claims);
  });

  it('verify does not judge expiry (callers report an expired ticket as expired)', async () => {
    const keys = parseViewerKeys(generateViewerKeySet('k1'));
    const old = { ...claims, iat: 1, exp: 2 };
    expect(await keys.verify(await keys.sign(old))).toEqual(old);
  });

  it('rotation: a new first key signs, the old key (public part only) still verifies', async () => {
    const oldSet = generateViewerKeySet('old');
    const oldKeys = parseViewerKeys(oldSet);
    const issuedBefore = await oldKeys.sign(claims);
    const [oldKey] = keysOf(oldSet);
    const { d: _private, ...oldPublic } = oldKey!;
    const rotated = parseViewerKeys(
      JSON.stringify({ keys: [...keysOf(generateViewerKeySet('new')), oldPublic] }),
    );
    expect(rotated.signingKid).toBe('new');
    expect(await rotated.verify(issuedBefore)).toEqual(claims);
    expect(await rotated.verify(await rotated.sign(claims))).toEqual(claims);
    // Once the old key is dropped, its tickets stop verifying.
    const dropped = parseViewerKeys(JSON.stringify({ keys: keysOf(generateViewerKeySet('new')) }));
    expect(await dropped.verify(issuedBefore)).toBeNull();
  });

  it('rejects tampering, other keys, wrong algorithms, other token types and garbage', async () => {
    const keys = parseViewerKeys(generateViewerKeySet('k1'));
    const ticket = await keys.sign(claims);
    const [h, p, s] = ticket.split('.') as [string, string, string];
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const other = parseViewerKeys(generateViewerKeySet('k1')); // same kid, different key
    for (const bad of [
      `${h}.${b64({ ...claims, mode: 'control' })}.${s}`,
      `${b64({ alg: 'none', typ: 'cubicle-viewer+jwt', kid: 'k1' })}.${p}.`,
      `${b64({ alg: 'HS256', typ: 'cubicle-viewer+jwt', kid: 'k1' })}.${p}.${s}`,
      `${b64({ alg: 'EdDSA', typ: 'JWT', kid: 'k1' })}.${p}.${s}`,
      await other.sign(claims),
      'not.a.ticket',
      '',
      `${h}.${p}`,
    ])
      expect(await keys.verify(bad), bad.slice(0, 30)).toBeNull();
    // A correctly signed payload that is not ticket-shaped is not a ticket either.
    expect(await keys.verify(await keys.sign({ ...claims, mode: 'admin' as 'view' }))).toBeNull();
  });

  it('configuration errors name what is wrong', () => {
    expect(() => parseViewerKeys('nope')).toThrow(/not JSON/);
    expect(() => parseViewerKeys('{"keys":[]}')).toThrow();
    const [k] = keysOf(generateViewerKeySet('a'));
    const { d: _d, ...pub } = k!;
    expect(() => parseViewerKeys(JSON.stringify({ keys: [pub] }))).toThrow(/private part/);
    expect(() => parseViewerKeys(JSON.stringify({ keys: [k, k] }))).toThrow(/unique/);
    expect(() => parseViewerKeys(JSON.stringify({ keys: [{ ...k, crv: 'P-256' }] }))).toThrow();
  });
});
