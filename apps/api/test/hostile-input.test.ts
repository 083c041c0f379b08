// Inputs that once answered 500 where a 400 was due (issue 11 §3, and every failure the API fuzz
// finds is added here by name): each is a clear 400 naming the field, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

const NUL = '\u0000';
const LONE = '\ud800';

interface Issue {
  location: string;
  path: string;
  message: string;
}

describe('hostile input is a 400, never a 500', () => {
  let fx: FullAppFixture;
  let claimId: string;
  beforeAll(async () => {
    fx = await fullAppFixture();
    claimId = (await fx.claim('hostile')).id;
  });
  afterAll(async () => fx?.close());

  const send = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    fx.app.inject({
      method,
      url,
      headers: { authorization: fx.a.admin },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const issuesOf = (res: { statusCode: number; body: string; json: () => unknown }) => {
    expect(res.statusCode, res.body).toBe(400);
    const error = (res.json() as { error: { code: string; details?: { issues: Issue[] } } }).error;
    expect(error.code).toBe('validation_failed');
    return error.details?.issues ?? [];
  };

  it('NUL in an API key name', async () => {
    const issues = issuesOf(await send('POST', '/v1/api-keys', { name: `ci${NUL}` }));
    expect(issues).toContainEqual(expect.objectContaining({ location: 'body', path: 'name' }));
    const names = await fx.db.apiKey.findMany({ select: { name: true } });
    expect(names.some((k) => k.name.startsWith('ci'))).toBe(false);
  });

  it.each([
    ['a NUL in a metadata value', { job: `a${NUL}b` }, 'metadata.job'],
    ['a lone surrogate in a metadata value', { job: `x${LONE}` }, 'metadata.job'],
    ['a NUL in a metadata key', { [`k${NUL}`]: 'v' }, 'metadata'],
    ['a lone surrogate in a metadata key', { [`k${LONE}`]: 'v' }, 'metadata'],
  ])('%s of a claim', async (_name, metadata, path) => {
    const before = await fx.db.claim.count();
    const issues = issuesOf(await send('POST', '/v1/pools/hostile/claims', { metadata }));
    expect(issues.some((i) => i.path.startsWith(path))).toBe(true);
    expect(await fx.db.claim.count()).toBe(before);
  });

  it('a claim whose metadata JSON escapes \\u0000 (as a raw body) is a 400', async () => {
    const res = await fx.app.inject({
      method: 'POST',
      url: '/v1/pools/hostile/claims',
      headers: { authorization: fx.a.admin, 'content-type': 'application/json' },
      payload: '{"metadata":{"job":"\\u0000"},"wait_seconds":0}',
    });
    expect(issuesOf(res)).toContainEqual(expect.objectContaining({ path: 'metadata.job' }));
  });

  it.each([
    ['/v1/pools'],
    ['/v1/claims'],
    ['/v1/api-keys'],
    ['/v1/audit-events'],
    ['claim/actions'],
    ['claim/viewer-tickets'],
  ])('a NUL in the cursor of %s', async (list) => {
    const url = list.startsWith('claim/') ? `/v1/claims/${claimId}/${list.slice(6)}` : list;
    for (const cursor of [NUL, `clm_${NUL}`, 'x'.repeat(201), '%ZZ']) {
      const res = await send('GET', `${url}?cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode, `${url} ${JSON.stringify(cursor)}: ${res.body}`).toBe(400);
    }
  });

  it('windows/launch with argv [""]', async () => {
    const issues = issuesOf(
      await send('POST', `/v1/claims/${claimId}/windows/launch`, { argv: [''] }),
    );
    expect(issues).toContainEqual(expect.objectContaining({ path: 'argv.0' }));
  });

  it('shell and launch argv or env with NUL', async () => {
    const shell = await send('POST', `/v1/claims/${claimId}/shell`, { argv: ['echo', `a${NUL}`] });
    expect(shell.statusCode).toBe(400);
    const env = await send('POST', `/v1/claims/${claimId}/windows/launch`, {
      argv: ['xterm'],
      env: { A: NUL },
    });
    expect(issuesOf(env)).toContainEqual(expect.objectContaining({ path: 'env.A' }));
  });

  it('a NUL in a pool image or env value', async () => {
    const image = await send('POST', '/v1/pools/hostile', {});
    // PUT is the verb: a POST on the pool's path is 405 naming the methods served there.
    expect(image.statusCode).toBe(405);
    expect(image.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    const put = (payload: unknown) =>
      fx.app.inject({
        method: 'PUT',
        url: '/v1/pools/hostile-two',
        headers: { authorization: fx.a.admin },
        payload: payload as object,
      });
    expect(issuesOf(await put({ image: `img${NUL}` }))).toContainEqual(
      expect.objectContaining({ path: 'image' }),
    );
    expect(issuesOf(await put({ image: 'img', env: { A: LONE } }))).toContainEqual(
      expect.objectContaining({ path: 'env.A' }),
    );
    expect(await fx.db.pool.count({ where: { name: 'hostile-two' } })).toBe(0);
  });

  // Found by the fuzz (seed 411696584): `{"name":"_","value":"\udfff"}` answered 500.
  it.each([
    ['a lone surrogate', `x${LONE}`],
    ['a NUL', `x${NUL}y`],
  ])('%s in a secret value, stored or per claim', async (_name, value) => {
    const before = await fx.db.tenantSecret.count();
    const stored = issuesOf(await send('POST', '/v1/secrets', { name: 'HOSTILE', value }));
    expect(stored).toContainEqual(expect.objectContaining({ location: 'body', path: 'value' }));
    const put = await fx.app.inject({
      method: 'PUT',
      url: '/v1/secrets/HOSTILE',
      headers: { authorization: fx.a.admin },
      payload: { value },
    });
    expect(issuesOf(put)).toContainEqual(expect.objectContaining({ path: 'value' }));
    expect(await fx.db.tenantSecret.count()).toBe(before);
    const perClaim = await send('POST', `/v1/claims/${claimId}/secrets`, { name: 'H', value });
    expect(issuesOf(perClaim)).toContainEqual(expect.objectContaining({ path: 'value' }));
    expect(await fx.db.claimSecret.count({ where: { claimId } })).toBe(0);
  });
});
