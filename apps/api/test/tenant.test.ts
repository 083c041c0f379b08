import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewerFixture, type ViewerFixture } from './viewer-fixture.js';

/** GET/PATCH /v1/tenant: the origins allowed to frame the viewer (CSP frame-ancestors). */
describe('tenant embedding origins', () => {
  let f: ViewerFixture;
  beforeAll(async () => {
    f = await viewerFixture();
  });
  afterAll(async () => f?.close());
  const call = (method: 'GET' | 'PATCH', authorization: string, payload?: unknown) =>
    f.apps[0].inject({
      method,
      url: '/v1/tenant',
      headers: { authorization },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  it('any key reads its tenant; only admins set origins; bad origins change nothing', async () => {
    const read = await call('GET', f.a.member);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ id: f.a.tenantId, embed_origins: [] });
    const origins = ['https://app.acme.test', 'https://*.acme.test:8443', 'http://localhost:3000'];
    const byMember = await call('PATCH', f.a.member, { embed_origins: origins });
    expect([byMember.statusCode, byMember.json().error.code]).toEqual([403, 'forbidden']);
    for (const bad of [
      ['http://acme.test'],
      ['https://acme.test/path'],
      ['https://Acme.test'],
      ['https://acme.test:99999'],
      ['javascript:alert(1)'],
      ['https://a.test', 'https://a.test'],
      ["https://a.test'; script-src *"],
      '*',
    ]) {
      const res = await call('PATCH', f.a.admin, { embed_origins: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await call('GET', f.a.admin)).json().embed_origins).toEqual([]);
    const set = await call('PATCH', f.a.admin, { embed_origins: origins });
    expect(set.statusCode).toBe(200);
    expect(set.json().embed_origins).toEqual(origins);
    expect((await call('GET', f.b.admin)).json()).toMatchObject({
      id: f.b.tenantId,
      embed_origins: [],
    });
  });

  it('admins set retention days one at a time; the rest and other tenants keep theirs', async () => {
    const defaults = { recording_days: 30, snapshot_days: 30, profile_days: 90 };
    expect((await call('GET', f.a.member)).json().retention).toEqual(defaults);
    const byMember = await call('PATCH', f.a.member, { retention: { recording_days: 7 } });
    expect(byMember.statusCode).toBe(403);
    for (const bad of [
      { recording_days: 0 },
      { snapshot_days: 3651 },
      { profile_days: 1.5 },
      { other: 1 },
    ]) {
      const res = await call('PATCH', f.a.admin, { retention: bad });
      expect([res.statusCode, res.json().error.code], JSON.stringify(bad)).toEqual([
        400,
        'validation_failed',
      ]);
    }
    const before = (await call('GET', f.a.admin)).json();
    expect(before.retention).toEqual(defaults);
    const set = await call('PATCH', f.a.admin, { retention: { recording_days: 7 } });
    expect(set.statusCode).toBe(200);
    expect(set.json().retention).toEqual({ ...defaults, recording_days: 7 });
    // The origins were not part of this change and stay as they were.
    expect(set.json().embed_origins).toEqual(before.embed_origins);
    expect((await call('GET', f.b.admin)).json().retention).toEqual(defaults);
  });
});
