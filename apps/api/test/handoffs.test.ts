import {
  Handoff,
  HandoffCreated,
  ViewerCloseCodes,
  ViewerTicketCreated,
  WebhookPayload,
} from '@cubicle/contract/api';
import {
  answerGuestCallJob,
  expireHandoffs,
  reclaimClaims,
  type Deps,
} from '@cubicle/control-plane';
import { newId } from '@cubicle/db';
import { LaneDispatcher } from '@cubicle/queue';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  recordingVnc,
  viewerFixture,
  type RecordingVnc,
  type ViewerFixture,
} from './viewer-fixture.js';
import { openStream, waitFor } from './viewer-ws.js';

// Client→server RFB as noVNC sends it.
const HANDSHAKE = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 0])]);
const FBUR = Buffer.from([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);
const KEY = Buffer.from([4, 1, 0, 0, 0, 0, 0xff, 0x0d]);
const CLICK = Buffer.from([5, 1, 0, 100, 0, 100]);
const forwarded = (vnc: RecordingVnc, i: number) => Buffer.concat(vnc.received[i] ?? []);

/** Every driving call (and its body) a handoff refuses, and one read it lets through. */
const DRIVING: [string, unknown][] = [
  ['act', { action: 'click', window_id: 7, element_token: 's1a:3' }],
  ['input', { action: 'click', x: 10, y: 10, screenshot_id: 'p1' }],
  ['shell', { command: 'true' }],
  ['files/write', { path: '/tmp/x', content: 'x' }],
  ['files/delete', { path: '/tmp/x' }],
  ['windows/launch', { argv: ['xterm'] }],
  ['windows/close', { window_id: 7 }],
];

/**
 * Handoffs through the real API on real Postgres and Redis, with the worker's half of guest
 * calls running: the agent's driving calls are 409 `handoff_active` (with the handoff id) while
 * a human holds the desktop, the control ticket bound to the handoff forwards input and renews
 * the lease, a view ticket never does, return gives control back with the note (stream closed
 * 4004, span in the actions, audit, webhooks), the lease expires through the worker's sweep on a
 * controlled clock, the claim's TTL holds while the hard maximum still ends it, and another
 * tenant sees nothing.
 */
describe('handoffs', () => {
  let f: ViewerFixture;
  let vnc: RecordingVnc;
  let dispatcher: LaneDispatcher;
  let laneConnection: Redis;
  const call = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    authorization = f.a.member,
  ) =>
    f.apps[0].inject({
      method,
      url,
      headers: { authorization },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const request = async (claimId: string, body: unknown = { reason: 'a login needs 2FA' }) => {
    const res = await call('POST', `/v1/claims/${claimId}/handoffs`, body, f.a.admin);
    expect(res.statusCode, res.body).toBe(201);
    return HandoffCreated.parse(res.json());
  };
  /** deps on a clock `offsetMs` ahead, as the worker's sweep would see that moment. */
  const at = (offsetMs: number): Deps => ({
    ...f.workerDeps,
    now: () => new Date(Date.now() + offsetMs),
  });
  const addWebhook = () =>
    f.db.webhookEndpoint.create({
      data: {
        id: newId('webhook'),
        tenantId: f.a.tenantId,
        url: 'https://hooks.example.com/cubicle',
        events: ['claim.handoff_requested', 'claim.handoff_returned'],
        secretCiphertext: Buffer.from('not used: nothing is delivered here'),
      },
    });
  const payloadsOf = async (claimId: string) =>
    (
      await f.db.webhookDelivery.findMany({
        where: { tenantId: f.a.tenantId },
        orderBy: { createdAt: 'asc' },
      })
    )
      .map((d) => WebhookPayload.parse(JSON.parse(d.body)))
      .filter((p) => 'claim_id' in p.data && p.data.claim_id === claimId);

  beforeAll(async () => {
    f = await viewerFixture();
    vnc = await recordingVnc();
    laneConnection = f.connections.redis.duplicate();
    dispatcher = new LaneDispatcher({
      connection: laneConnection,
      prefix: f.connections.queuePrefix,
      handler: (job) =>
        // The API's own Resources stand in for the worker's (same database, Redis and keyring).
        answerGuestCallJob(
          f.apps[0].resources,
          { publisher: f.connections.redis, prefix: f.connections.queuePrefix },
          job,
        ),
    });
    dispatcher.start();
    await addWebhook();
  });
  afterAll(async () => {
    await dispatcher?.close();
    laneConnection?.disconnect();
    await f?.close();
    await vnc?.close();
  });

  it("refuses the agent's driving calls with 409 handoff_active while a human holds the desktop; reads go on", async () => {
    const claimId = await f.claim(vnc.endpoint);
    const before = (await call('GET', `/v1/claims/${claimId}`)).json();
    // A run queued before the handoff: its stdin is driving too.
    const run = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['cat'] });
    expect(run.statusCode, run.body).toBe(202);

    const h = await request(claimId, {
      reason: 'a CAPTCHA',
      for: 'ops@example.com',
      ttl_seconds: 600,
    });
    expect(h).toMatchObject({
      claim_id: claimId,
      state: 'active',
      reason: 'a CAPTCHA',
      for: 'ops@example.com',
      ttl_seconds: 600,
      taken_at: null,
      ended_at: null,
      note: null,
      held_ms: null,
    });
    expect(h.control).toMatchObject({ mode: 'control', handoff_id: h.id, claim_id: claimId });
    // The claim's TTL deadline is held at least to the lease.
    const held = (await call('GET', `/v1/claims/${claimId}`)).json();
    expect(Date.parse(held.expires_at)).toBeGreaterThanOrEqual(
      Math.min(Date.parse(h.lease_expires_at), Date.parse(before.max_expires_at)),
    );

    for (const [path, body] of DRIVING) {
      const res = await call('POST', `/v1/claims/${claimId}/${path}`, body);
      expect(res.statusCode, `${path}: ${res.body}`).toBe(409);
      expect(res.json().error).toMatchObject({
        code: 'handoff_active',
        details: { handoff_id: h.id },
      });
    }
    const newRun = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['true'] });
    expect(newRun.json().error).toMatchObject({
      code: 'handoff_active',
      details: { handoff_id: h.id },
    });
    const stdin = await call('POST', `/v1/runs/${run.json().id}/stdin`, { data: 'hi' });
    expect(stdin.json().error).toMatchObject({
      code: 'handoff_active',
      details: { handoff_id: h.id },
    });
    // A read reaches the guest door (this seeded sandbox has no guest: 502), not the refusal.
    const observe = await call('POST', `/v1/claims/${claimId}/files/read`, { path: '/tmp/x' });
    expect(observe.json().error.code).toBe('backend_unavailable');

    // One active handoff per claim; an unbound control ticket would drive beside the human.
    const again = await call('POST', `/v1/claims/${claimId}/handoffs`, { reason: 'x' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({
      code: 'handoff_active',
      details: { handoff_id: h.id },
    });
    const unbound = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'control' });
    expect(unbound.json().error).toMatchObject({ code: 'handoff_active' });
    expect(
      (await call('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' })).statusCode,
    ).toBe(201);
    const viewBound = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, {
      mode: 'view',
      handoff_id: h.id,
    });
    // A view ticket of the handoff stays a view ticket (and goes with the handoff).
    expect(viewBound.statusCode, viewBound.body).toBe(201);
    expect(viewBound.json()).toMatchObject({ mode: 'view', handoff_id: h.id });

    const list = await call('GET', `/v1/claims/${claimId}/handoffs?state=active`);
    expect(list.json().data.map((x: Handoff) => x.id)).toEqual([h.id]);
    const one = Handoff.parse((await call('GET', `/v1/claims/${claimId}/handoffs/${h.id}`)).json());
    expect(one.state).toBe('active');

    // Returned: driving reaches the guest door again (502 here: no guest), stdin is taken.
    const back = await call('POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, {
      note: 'done',
    });
    expect(back.statusCode, back.body).toBe(200);
    const act = await call('POST', `/v1/claims/${claimId}/act`, DRIVING[0]![1]);
    expect(act.json().error.code).toBe('backend_unavailable');
    expect((await call('POST', `/v1/runs/${run.json().id}/stdin`, { data: 'hi' })).statusCode).toBe(
      202,
    );
  });

  it('the control ticket forwards keys and pointer and renews the lease; a view ticket never gains control; return closes it (4004)', async () => {
    const claimId = await f.claim(vnc.endpoint);
    const h = await request(claimId, { reason: 'approve a payment', ttl_seconds: 30 });
    // The dashboard mints its own control ticket for the handoff, with the human's key.
    const mine = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, {
      mode: 'control',
      handoff_id: h.id,
      ttl_seconds: 900,
    });
    expect(mine.statusCode, mine.body).toBe(201);
    const ticket = ViewerTicketCreated.parse(mine.json());
    const info = await f.apps[0].inject({
      method: 'POST',
      url: '/v1/viewer/introspect',
      payload: { ticket: ticket.ticket },
    });
    expect(info.json()).toMatchObject({ state: 'active', mode: 'control', handoff_id: h.id });

    const view = ViewerTicketCreated.parse(
      (await call('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' })).json(),
    );
    const viewConn = vnc.received.length;
    const watcher = await openStream(f.urls[1], view.ticket);
    watcher.ws.send(Buffer.concat([HANDSHAKE, KEY, CLICK, FBUR]));
    await waitFor(() => forwarded(vnc, viewConn).length >= 14 + FBUR.length);
    expect(forwarded(vnc, viewConn)).toEqual(
      Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 1]), FBUR]),
    );

    const conn = vnc.received.length;
    const human = await openStream(f.urls[1], ticket.ticket);
    human.ws.send(Buffer.concat([HANDSHAKE, FBUR, CLICK, KEY]));
    const expected = Buffer.concat([
      Buffer.from('RFB 003.008\n'),
      Buffer.from([1, 1]),
      FBUR,
      CLICK,
      KEY,
    ]);
    await waitFor(() => forwarded(vnc, conn).length >= expected.length);
    expect(forwarded(vnc, conn)).toEqual(expected);
    // The first input renews the lease and says who took over.
    await waitFor(
      async () => (await f.db.handoff.findUniqueOrThrow({ where: { id: h.id } })).takenAt !== null,
    );
    const taken = await f.db.handoff.findUniqueOrThrow({ where: { id: h.id } });
    expect(taken.takenByKeyId).toBe(
      ticket.id &&
        (await f.db.viewerTicket.findUniqueOrThrow({ where: { id: ticket.id } })).createdByKeyId,
    );
    expect(taken.leaseExpiresAt.getTime()).toBeGreaterThan(Date.parse(h.lease_expires_at));

    const start = Date.now();
    const back = await call('POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, {
      note: 'paid; the receipt is open',
    });
    expect(back.statusCode).toBe(200);
    const closed = await human.closed;
    expect(closed.code).toBe(ViewerCloseCodes.handoff_ended);
    console.log(`[handoff] return → control stream closed: ${closed.at - start} ms`);
    // The view stream goes on; the handoff's tickets are revoked, the initial one included.
    expect(watcher.ws.readyState).toBe(watcher.ws.OPEN);
    for (const t of [ticket.ticket, h.control.ticket]) {
      const state = await f.apps[0].inject({
        method: 'POST',
        url: '/v1/viewer/introspect',
        payload: { ticket: t },
      });
      expect(state.json().state).toBe('revoked');
    }
    const minted = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, {
      mode: 'control',
      handoff_id: h.id,
    });
    expect(minted.json().error.code).toBe('conflict');
    watcher.ws.close();
  });

  it('return gives control back with the note: the answer, the span in the actions, audit with who held it and how long, webhooks', async () => {
    const claimId = await f.claim(vnc.endpoint);
    const before = (await call('GET', `/v1/claims/${claimId}`)).json();
    const ttlLeft = Date.parse(before.expires_at) - Date.now();
    const h = await request(claimId);
    const back = Handoff.parse(
      (
        await call('POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, {
          note: 'logged in as alice',
        })
      ).json(),
    );
    expect(back).toMatchObject({ id: h.id, state: 'returned', note: 'logged in as alice' });
    expect(back.held_ms).toBeGreaterThanOrEqual(0);
    // Returning twice answers the ended handoff as it is.
    const twice = await call('POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, {
      note: 'x',
    });
    expect(twice.json()).toMatchObject({ state: 'returned', note: 'logged in as alice' });
    // The claim has back the TTL it had left when its agent asked.
    const after = (await call('GET', `/v1/claims/${claimId}`)).json();
    expect(Math.abs(Date.parse(after.expires_at) - Date.now() - ttlLeft)).toBeLessThan(5_000);

    const actions = (await call('GET', `/v1/claims/${claimId}/actions`)).json().data;
    const span = actions.find((a: { operation: string }) => a.operation === 'handoff');
    expect(span).toMatchObject({
      effect: 'unverifiable',
      request: { handoff_id: h.id, state: 'returned', note: 'logged in as alice' },
      result: { escalation: { target: 'observe' } },
    });

    await f.apps[0].auditSettled?.();
    const audit = (await call('GET', '/v1/audit-events?limit=100', undefined, f.a.admin)).json()
      .data;
    const ended = audit.find(
      (e: { action: string; target_id: string }) =>
        e.action === 'handoff.returned' && e.target_id === h.id,
    );
    expect(ended).toMatchObject({
      actor: { type: 'api_key' },
      details: { claim_id: claimId, held_ms: back.held_ms },
    });
    expect(audit.some((e: { action: string }) => e.action === 'handoff.request')).toBe(true);

    const payloads = await payloadsOf(claimId);
    expect(payloads.map((p) => p.type)).toEqual([
      'claim.handoff_requested',
      'claim.handoff_returned',
    ]);
    expect(payloads[1]!.data).toMatchObject({
      handoff_id: h.id,
      state: 'returned',
      note: 'logged in as alice',
      held_ms: back.held_ms,
    });
  });

  it('the lease expires without a return: the sweep (controlled clock) gives control back', async () => {
    const claimId = await f.claim(vnc.endpoint);
    const h = await request(claimId, { reason: 'nobody came', ttl_seconds: 60 });
    const early = await expireHandoffs(at(30_000));
    expect(early.map((e) => e.id)).not.toContain(h.id);
    const swept = await expireHandoffs(at(61_000));
    expect(swept).toContainEqual({ id: h.id, to: 'expired' });
    const now = Handoff.parse((await call('GET', `/v1/claims/${claimId}/handoffs/${h.id}`)).json());
    expect(now).toMatchObject({ state: 'expired', note: null, ended_by_key_id: null });
    const act = await call('POST', `/v1/claims/${claimId}/act`, DRIVING[0]![1]);
    expect(act.json().error.code).toBe('backend_unavailable');
    const payloads = await payloadsOf(claimId);
    expect(payloads.at(-1)).toMatchObject({
      type: 'claim.handoff_returned',
      data: { handoff_id: h.id, state: 'expired' },
    });
    const audit = (await call('GET', '/v1/audit-events?limit=100', undefined, f.a.admin)).json()
      .data;
    expect(
      audit.find(
        (e: { action: string; target_id: string }) =>
          e.action === 'handoff.expired' && e.target_id === h.id,
      ),
    ).toMatchObject({ actor: { type: 'system', component: 'worker' } });
  });

  it("another tenant's key gets 404 on every handoff call; nothing changes", async () => {
    const claimId = await f.claim(vnc.endpoint);
    const h = await request(claimId);
    for (const [method, url, body] of [
      ['POST', `/v1/claims/${claimId}/handoffs`, { reason: 'x' }],
      ['GET', `/v1/claims/${claimId}/handoffs`, undefined],
      ['GET', `/v1/claims/${claimId}/handoffs/${h.id}`, undefined],
      ['POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, { note: 'x' }],
      ['POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'control', handoff_id: h.id }],
    ] as const) {
      const res = await call(method, url, body, f.b.admin);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await f.db.handoff.findUniqueOrThrow({ where: { id: h.id } })).state).toBe('active');
    await call('POST', `/v1/claims/${claimId}/handoffs/${h.id}/return`, {});
  });

  // Last: the sweeps run on a clock hours ahead and end every claim of this file that is due then.
  it("the claim's TTL and idle window do not end it while a human holds it; the hard maximum still does", async () => {
    const claimId = await f.claim(vnc.endpoint);
    const now = Date.now();
    // A short TTL and idle window, a hard maximum two hours away.
    await f.db.claim.update({
      where: { id: claimId },
      data: {
        expiresAt: new Date(now + 60_000),
        maxExpiresAt: new Date(now + 7_200_000),
        idleTimeoutSeconds: 30,
      },
    });
    const h = await request(claimId, { reason: 'long review', ttl_seconds: 86_400 });
    await reclaimClaims(at(3_600_000));
    const during = await f.db.claim.findUniqueOrThrow({ where: { id: claimId } });
    expect(during.releaseReason).toBeNull();
    const released = await reclaimClaims(at(7_201_000));
    expect(released).toContainEqual(
      expect.objectContaining({ id: claimId, reason: 'max_lifetime' }),
    );
    const swept = await expireHandoffs(at(7_202_000));
    expect(swept).toContainEqual({ id: h.id, to: 'ended' });
    expect((await f.db.handoff.findUniqueOrThrow({ where: { id: h.id } })).state).toBe('ended');
  });
});
