import { ViewerTicketCreated } from '@cubicle/contract/api';
import { Writable } from 'node:stream';
import { generateViewerKeySet, parseViewerKeys } from '@cubicle/viewer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { testAppOptions } from './app-options.js';
import { viewerFixture, WEB_URL, type ViewerFixture } from './viewer-fixture.js';
import { openStream, refusedUpgrade } from './viewer-ws.js';

/**
 * Viewer tickets through the real API: minting, listing, revoking, tenant isolation, bad input,
 * introspection states, and the stream endpoint refusing (401, before any upgrade) every ticket
 * that is not active.
 */
describe('viewer tickets', () => {
  let f: ViewerFixture;
  let claimId: string;
  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    authorization?: string,
    payload?: unknown,
  ) =>
    f.apps[0].inject({
      method,
      url,
      headers: authorization ? { authorization } : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const mint = async (payload: unknown, auth = f.a.member, id = claimId) => {
    const res = await call('POST', `/v1/claims/${id}/viewer-tickets`, auth, payload);
    expect(res.statusCode, res.body).toBe(201);
    return ViewerTicketCreated.parse(res.json());
  };
  const introspect = (ticket: string) =>
    call('POST', '/v1/viewer/introspect', undefined, { ticket });

  beforeAll(async () => {
    f = await viewerFixture();
    claimId = await f.claim('127.0.0.1:9');
  });
  afterAll(async () => f?.close());

  it('mints a view ticket: the signed string is in the response only, never stored', async () => {
    const res = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, f.a.member, {
      mode: 'view',
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const t = ViewerTicketCreated.parse(res.json());
    expect(t).toMatchObject({ claim_id: claimId, mode: 'view', revoked_at: null });
    expect(t.viewer_url).toBe(`${WEB_URL}/embed/${t.ticket}`);
    expect(t.embed_html).toContain(`src="${t.viewer_url}"`);
    expect(t.embed_html).toMatch(/^<iframe [^>]*sandbox="allow-scripts allow-same-origin"/);
    // Default TTL: one hour.
    const ttl = Date.parse(t.expires_at) - Date.parse(t.created_at);
    expect(ttl).toBeGreaterThan(3599_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    const row = await f.db.viewerTicket.findUniqueOrThrow({ where: { id: t.id } });
    expect(JSON.stringify(row)).not.toContain(t.ticket.split('.')[2]!);
    expect(row).toMatchObject({ mode: 'view', claimId, tenantId: f.a.tenantId });

    const list = await call('GET', `/v1/claims/${claimId}/viewer-tickets`, f.a.admin);
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((x: { id: string }) => x.id)).toContain(t.id);
    expect(list.body).not.toContain(t.ticket);
    expect(list.body).not.toContain('"ticket"');
  });

  it('admin and member keys may mint control tickets (there is no read-only role)', async () => {
    expect((await mint({ mode: 'control' }, f.a.admin)).mode).toBe('control');
    expect((await mint({ mode: 'control', ttl_seconds: 60 }, f.a.member)).mode).toBe('control');
  });

  it("another tenant's key gets 404 on the claim's tickets and on revoking one; nothing changes", async () => {
    const t = await mint({ mode: 'view' });
    for (const [method, url] of [
      ['POST', `/v1/claims/${claimId}/viewer-tickets`],
      ['GET', `/v1/claims/${claimId}/viewer-tickets`],
      ['DELETE', `/v1/viewer-tickets/${t.id}`],
    ] as const) {
      const res = await call(
        method,
        url,
        f.b.admin,
        method === 'POST' ? { mode: 'view' } : undefined,
      );
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect(await f.db.viewerTicket.findUniqueOrThrow({ where: { id: t.id } })).toMatchObject({
      revokedAt: null,
    });
    expect((await introspect(t.ticket)).json().state).toBe('active');
  });

  it('bad input is a 4xx with a stable code and mints nothing', async () => {
    const before = await f.db.viewerTicket.count();
    const url = `/v1/claims/${claimId}/viewer-tickets`;
    for (const body of [
      { mode: 'admin' },
      { mode: 'view', ttl_seconds: 0 },
      { mode: 'view', ttl_seconds: 86_401 },
      { mode: 'view', ttl_seconds: 1.5 },
      { mode: 'view', extra: true },
    ]) {
      const res = await call('POST', url, f.a.admin, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const badId = await call('POST', '/v1/claims/nope/viewer-tickets', f.a.admin, {});
    expect([badId.statusCode, badId.json().error.code]).toEqual([400, 'invalid_id']);
    const badTicketId = await call('DELETE', '/v1/viewer-tickets/vtk_nope', f.a.admin);
    expect([badTicketId.statusCode, badTicketId.json().error.code]).toEqual([400, 'invalid_id']);
    const unknown = await call(
      'DELETE',
      '/v1/viewer-tickets/vtk_01hzy3m9v0k6r7x8q2w4e5t6y7',
      f.a.admin,
    );
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, 'not_found']);
    const noKey = await call('POST', url, undefined, { mode: 'view' });
    expect([noKey.statusCode, noKey.json().error.code]).toEqual([401, 'unauthenticated']);
    expect(await f.db.viewerTicket.count()).toBe(before);
  });

  it('tickets need an active claim: a released one is 409 claim_not_active', async () => {
    const id = await f.claim('127.0.0.1:9');
    expect((await call('DELETE', `/v1/claims/${id}`, f.a.admin)).statusCode).toBe(200);
    const res = await call('POST', `/v1/claims/${id}/viewer-tickets`, f.a.admin, { mode: 'view' });
    expect([res.statusCode, res.json().error.code]).toEqual([409, 'claim_not_active']);
  });

  it('introspect needs no key and reports active, revoked, expired and ended', async () => {
    const t = await mint({ mode: 'view' });
    const active = await introspect(t.ticket);
    expect(active.statusCode).toBe(200);
    expect(active.json()).toEqual({
      state: 'active',
      mode: 'view',
      claim_id: claimId,
      handoff_id: null,
      expires_at: t.expires_at,
      embed_origins: [],
      stream_url: `ws://localhost:80/v1/viewer/stream?ticket=${t.ticket}`,
    });

    // Revoking is idempotent.
    expect((await call('DELETE', `/v1/viewer-tickets/${t.id}`, f.a.member)).statusCode).toBe(204);
    expect((await call('DELETE', `/v1/viewer-tickets/${t.id}`, f.a.member)).statusCode).toBe(204);
    expect((await introspect(t.ticket)).json().state).toBe('revoked');

    const short = await mint({ mode: 'view', ttl_seconds: 1 });
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await introspect(short.ticket)).json().state).toBe('expired');

    const other = await f.claim('127.0.0.1:9');
    const live = await mint({ mode: 'control' }, f.a.admin, other);
    expect((await call('DELETE', `/v1/claims/${other}`, f.a.admin)).statusCode).toBe(200);
    expect((await introspect(live.ticket)).json()).toMatchObject({
      state: 'ended',
      mode: 'control',
    });
    // The claim's end revoked its tickets in the same transaction.
    expect(await f.db.viewerTicket.count({ where: { claimId: other, revokedAt: null } })).toBe(0);
  });

  it('introspect answers 401 invalid_ticket to garbage, tampering and foreign keys', async () => {
    const t = await mint({ mode: 'view' });
    const [head, payload, sig] = t.ticket.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const upgraded = Buffer.from(JSON.stringify({ ...claims, mode: 'control' })).toString(
      'base64url',
    );
    const foreign = await parseViewerKeys(generateViewerKeySet('test')).sign(claims);
    for (const ticket of [
      'garbage',
      'a.b.c',
      `${head}.${upgraded}.${sig}`,
      // One signature character changed (in the middle: every bit there is significant).
      `${head}.${payload}.${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`,
      foreign,
      `${head}.${payload}.`,
    ]) {
      const res = await introspect(ticket);
      expect(res.statusCode, ticket.slice(0, 40)).toBe(401);
      expect(res.json().error.code).toBe('invalid_ticket');
    }
    const missing = await call('POST', '/v1/viewer/introspect', undefined, {});
    expect([missing.statusCode, missing.json().error.code]).toEqual([400, 'validation_failed']);
  });

  it('the stream refuses with 401 before the upgrade unless the ticket is active', async () => {
    const revoked = await mint({ mode: 'view' });
    await call('DELETE', `/v1/viewer-tickets/${revoked.id}`, f.a.admin);
    const expired = await mint({ mode: 'view', ttl_seconds: 1 });
    const other = await f.claim('127.0.0.1:9');
    const ended = await mint({ mode: 'view' }, f.a.admin, other);
    await call('DELETE', `/v1/claims/${other}`, f.a.admin);
    await new Promise((r) => setTimeout(r, 1_100));
    const cases: [string, string, string | undefined][] = [
      ['missing', '', undefined],
      ['garbage', 'garbage', undefined],
      ['revoked', revoked.ticket, 'revoked'],
      ['expired', expired.ticket, 'expired'],
      ['ended', ended.ticket, 'ended'],
    ];
    for (const [name, ticket, state] of cases) {
      const refused = await refusedUpgrade(f.urls[0], ticket);
      expect(refused.status, name).toBe(401);
      expect(refused.body.error.code, name).toBe('invalid_ticket');
      if (state) expect(refused.body.error.details).toEqual({ state });
    }
  });

  it('request logs never carry the ticket (the query string is redacted)', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = await buildApp({
      ...testAppOptions(f.connections.queuePrefix),
      ...f.connections,
      logger: { level: 'debug', stream: sink },
      viewer: { keys: f.keys, webUrl: WEB_URL },
    });
    const t = await mint({ mode: 'view' });
    const revoked = await mint({ mode: 'view' });
    try {
      const url = await logged.listen({ host: '127.0.0.1', port: 0 });
      await call('DELETE', `/v1/viewer-tickets/${revoked.id}`, f.a.admin);
      (await openStream(url, t.ticket)).ws.terminate();
      expect((await refusedUpgrade(url, revoked.ticket)).status).toBe(401);
      await logged.inject({
        method: 'POST',
        url: '/v1/viewer/introspect',
        payload: { ticket: t.ticket },
      });
    } finally {
      await logged.close();
    }
    const log = lines.join('');
    expect(log).toContain('/v1/viewer/stream?ticket=[redacted]');
    expect(log).toContain('viewer stream opened');
    for (const ticket of [t.ticket, revoked.ticket]) {
      expect(log).not.toContain(ticket);
      expect(log).not.toContain(ticket.split('.')[2]!); // not even the signature
    }
  });

  it('a live ticket is upgraded (the stream opens with subprotocol binary)', async () => {
    const t = await mint({ mode: 'view' });
    const stream = await openStream(f.urls[0], t.ticket);
    expect(stream.ws.protocol).toBe('binary');
    stream.ws.terminate();
  });
});
