import { ViewerCloseCodes, ViewerTicketCreated } from '@cubicle/contract/api';
import { createQueueConnection } from '@cubicle/queue';
import { createStreamLeases, type LeaseRedis } from '@cubicle/viewer';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedisNamespace, type TestRedisNamespace } from '../../../test/harness/index.js';
import {
  recordingVnc,
  viewerFixture,
  type RecordingVnc,
  type ViewerFixture,
} from './viewer-fixture.js';
import { openStream, waitFor, type OpenStream } from './viewer-ws.js';

/** isRefused: the stream was closed at once with the limit code (else it stays open). */
async function isRefused(s: OpenStream): Promise<boolean> {
  const closed = await Promise.race([
    s.closed,
    new Promise<null>((r) => setTimeout(() => r(null), 300)),
  ]);
  return closed?.code === ViewerCloseCodes.limit;
}

/**
 * Viewer stream limits hold across API replicas (Redis leases), not per process: two replicas
 * of the fixture (perTicket 2, perTenant 3) share one budget, a crashed replica's slots lapse,
 * and a Redis failure falls back to the per-process limits instead of refusing every viewer.
 */
describe('viewer stream limits across replicas', () => {
  let f: ViewerFixture;
  let vnc: RecordingVnc;
  let claimId: string;
  const mint = async () => {
    const res = await f.apps[0].inject({
      method: 'POST',
      url: `/v1/claims/${claimId}/viewer-tickets`,
      headers: { authorization: f.a.member },
      payload: { mode: 'view', ttl_seconds: 600 },
    });
    expect(res.statusCode, res.body).toBe(201);
    return ViewerTicketCreated.parse(res.json()).ticket;
  };

  beforeAll(async () => {
    f = await viewerFixture();
    vnc = await recordingVnc();
    claimId = await f.claim(vnc.endpoint);
  });
  afterAll(async () => {
    await f?.close();
    await vnc?.close();
  });

  it('a ticket and a tenant get one budget however their streams spread over replicas', async () => {
    const ticket = await mint();
    const onA = await openStream(f.urls[0], ticket);
    const onB = await openStream(f.urls[1], ticket);
    // Each replica holds one stream of this ticket: per process there would be room for two more.
    const third = await openStream(f.urls[0], ticket);
    expect(await isRefused(third)).toBe(true);
    expect((await third.closed).reason).toBe('too many viewers on this ticket');
    const other = await openStream(f.urls[1], await mint());
    // Tenant: 3 streams open over both replicas; a fourth on either is refused.
    const over = await openStream(f.urls[0], await mint());
    expect(await isRefused(over)).toBe(true);
    expect((await over.closed).reason).toBe('too many viewers');
    // A viewer leaving on one replica frees the slot for the other.
    onB.ws.close();
    await onB.closed;
    await waitFor(async () => {
      const again = await openStream(f.urls[0], ticket);
      const refused = await isRefused(again);
      if (!refused) again.ws.close();
      return !refused;
    });
    for (const s of [onA, other]) s.ws.close();
    await Promise.all([onA.closed, other.closed]);
  });

  describe('leases', () => {
    let ns: TestRedisNamespace;
    let redis: Redis;
    beforeAll(() => {
      ns = createTestRedisNamespace();
      redis = createQueueConnection(ns.url);
    });
    afterAll(async () => {
      redis.disconnect();
      await ns.cleanup();
    });

    it("a crashed replica's slots lapse within the lease time; a live one's are renewed", async () => {
      let crashed = false;
      const dying: LeaseRedis = {
        eval: (...args) =>
          crashed ? Promise.reject(new Error('process gone')) : redis.eval(...args),
      };
      const limits = { perTicket: 1, perTenant: 10 };
      const options = { prefix: ns.bullPrefix, limits, leaseMs: 400 };
      const a = createStreamLeases(dying, options);
      const b = createStreamLeases(redis, options);
      const live = createStreamLeases(redis, options);
      try {
        expect((await a.reserve('tkt_1', 'ten_1')).admitted).toBe(true);
        expect(await b.reserve('tkt_1', 'ten_1')).toEqual({
          admitted: false,
          limit: 'ticket_limit',
        });
        crashed = true; // no release, no renewal: as if the replica was killed
        await waitFor(async () => {
          const r = await b.reserve('tkt_1', 'ten_1');
          if (r.admitted) r.release();
          return r.admitted;
        }, 3000);
        // A live replica renews its lease past several lease times: the slot stays taken.
        const held = await live.reserve('tkt_2', 'ten_1');
        expect(held.admitted).toBe(true);
        await new Promise((r) => setTimeout(r, 1200));
        expect((await b.reserve('tkt_2', 'ten_1')).admitted).toBe(false);
        if (held.admitted) held.release();
        await waitFor(async () => {
          const r = await b.reserve('tkt_2', 'ten_1');
          if (r.admitted) r.release();
          return r.admitted;
        });
      } finally {
        await Promise.all([a.close(), b.close(), live.close()]);
      }
    });

    it('with Redis failing, admission falls back to the per-process limits (and says so)', async () => {
      const errors: unknown[] = [];
      const broken: LeaseRedis = { eval: () => Promise.reject(new Error('ECONNREFUSED')) };
      const leases = createStreamLeases(broken, {
        prefix: ns.bullPrefix,
        limits: { perTicket: 1, perTenant: 1 },
        onError: (err) => errors.push(err),
      });
      expect((await leases.reserve('tkt_3', 'ten_3')).admitted).toBe(true);
      expect((await leases.reserve('tkt_3', 'ten_3')).admitted).toBe(true);
      expect(errors).toHaveLength(2);
      await leases.close();
    });
  });
});
