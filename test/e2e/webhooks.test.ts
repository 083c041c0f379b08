import { listOf, WebhookDelivery, WebhookPayload, WebhookWithSecret } from '@cubicle/contract/api';
import { verifyWebhook, WebhookVerificationError } from '@cubicle/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Webhooks end to end on the local backend: real desktops, the API, PostgreSQL, Redis and the
 * worker process. Every event of a claim's life reaches a loopback receiver (allowed by the
 * stack's operator setting), signed and verified with the independent `standardwebhooks`.
 */
describe('webhooks on a real claim lifecycle', () => {
  let s: Stack;
  let recv: WebhookReceiver;
  let secret: string;
  let webhookId: string;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const counts = async (pool: string) => (await call('GET', `/v1/pools/${pool}`)).json().counts;
  const eventsOf = (claimId: string, type: string) => (w: WebhookReceiver['received'][number]) =>
    w.payload.type === type && w.payload.data.claim_id === claimId;

  beforeAll(async () => {
    s = await startStack({ backend: 'local' });
    recv = await startWebhookReceiver();
    const created = await call('POST', '/v1/webhooks', {
      url: recv.url,
      events: ['claim.activated', 'claim.ended', 'sandbox.failed', 'run.finished'],
    });
    expect(created.statusCode, created.body).toBe(201);
    ({ secret, id: webhookId } = WebhookWithSecret.parse(created.json()));
    const put = await call('PUT', '/v1/pools/hooks', {
      ...s.backend.pool,
      autoscaling: { min: 1, initial: 1, max: 2 },
    });
    expect(put.statusCode).toBe(201);
    await waitFor(async () => (await counts('hooks')).warm === 1, 120_000, 250);
  });
  afterAll(async () => {
    await recv?.close();
    await s?.close();
  });

  it('a claim and its release arrive as claim.activated and claim.ended, signed', async () => {
    const claimed = await call('POST', '/v1/pools/hooks/claims', { metadata: { job: 'q-1' } });
    expect(claimed.statusCode).toBe(201);
    const claim = claimed.json();
    const [activated] = await recv.waitFor(1, eventsOf(claim.id, 'claim.activated'));
    expect(recv.verify(activated!, secret)).toEqual(WebhookPayload.parse(activated!.payload));
    expect(activated!.payload.data).toMatchObject({
      sandbox_id: claim.sandbox.id,
      pool: 'hooks',
      metadata: { job: 'q-1' },
    });

    expect((await call('DELETE', `/v1/claims/${claim.id}`)).statusCode).toBe(200);
    const [ended] = await recv.waitFor(1, eventsOf(claim.id, 'claim.ended'));
    expect(recv.verify(ended!, secret)).toBeTruthy();
    expect(ended!.payload.data).toMatchObject({ reason: 'released_by_client', pool: 'hooks' });
  });

  it("the SDKs' verifyWebhook accepts a real delivery and refuses it altered, replayed or with another secret", async () => {
    const claimed = (await call('POST', '/v1/pools/hooks/claims', {})).json();
    expect((await call('DELETE', `/v1/claims/${claimed.id}`)).statusCode).toBe(200);
    const [ended] = await recv.waitFor(1, eventsOf(claimed.id, 'claim.ended'));
    const { body, headers } = ended!;
    const event = await verifyWebhook(body, headers, secret);
    expect(event).toEqual(JSON.parse(body));
    expect(event).toMatchObject({ type: 'claim.ended', data: { claim_id: claimed.id } });
    expect(
      await verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret),
    ).toEqual(event);
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => 'accepted',
        (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e)),
      );
    expect(
      await refusal(verifyWebhook(body.replace('claim.ended', 'claim.activated'), headers, secret)),
    ).toBe('bad_signature');
    const later = (Number(headers['webhook-timestamp']) + 301) * 1000;
    expect(await refusal(verifyWebhook(body, headers, secret, { now: later }))).toBe(
      'bad_timestamp',
    );
    const other = `whsec_${Buffer.from('not the endpoint secret').toString('base64')}`;
    expect(await refusal(verifyWebhook(body, headers, other))).toBe('bad_signature');
  });

  it('a pending claim the worker fulfils is announced by the worker; its TTL end says ttl_expired', async () => {
    await waitFor(async () => (await counts('hooks')).warm === 1, 120_000, 250);
    const first = (await call('POST', '/v1/pools/hooks/claims', { ttl_seconds: 600 })).json();
    // No warm desktop left: this one waits for the refill the worker provisions.
    const second = await call('POST', '/v1/pools/hooks/claims', { wait_seconds: 0 });
    expect(second.statusCode).toBe(202);
    const pending = second.json();
    const [activated] = await recv.waitFor(1, eventsOf(pending.id, 'claim.activated'), 120_000);
    expect(recv.verify(activated!, secret)).toBeTruthy();
    const claim = (await call('GET', `/v1/claims/${pending.id}`)).json();
    expect(activated!.payload.data.sandbox_id).toBe(claim.sandbox.id);
    // A 1 s TTL from now: the worker's reclaim ends it.
    expect((await call('PATCH', `/v1/claims/${pending.id}`, { ttl_seconds: 1 })).statusCode).toBe(
      200,
    );
    const [ended] = await recv.waitFor(1, eventsOf(pending.id, 'claim.ended'), 30_000);
    expect(recv.verify(ended!, secret)).toBeTruthy();
    expect(ended!.payload.data.reason).toBe('ttl_expired');
    expect((await call('DELETE', `/v1/claims/${first.id}`)).statusCode).toBe(200);
    await recv.waitFor(1, eventsOf(first.id, 'claim.ended'));
  });

  it('a desktop lost under a claim arrives as sandbox.failed and claim.ended (sandbox_failed)', async () => {
    await waitFor(async () => (await counts('hooks')).warm >= 1, 120_000, 250);
    const claim = (await call('POST', '/v1/pools/hooks/claims', {})).json();
    expect(claim.status).toBe('active');
    await s.backend.loseSandbox(claim.sandbox.id);
    const [failed] = await recv.waitFor(
      1,
      (w) => w.payload.type === 'sandbox.failed' && w.payload.data.sandbox_id === claim.sandbox.id,
      60_000,
    );
    expect(recv.verify(failed!, secret)).toBeTruthy();
    expect(failed!.payload.data).toMatchObject({ pool: 'hooks', reason: 'lost by the backend' });
    const [ended] = await recv.waitFor(1, eventsOf(claim.id, 'claim.ended'), 60_000);
    expect(ended!.payload.data.reason).toBe('sandbox_failed');
  });

  it('an event recorded while the worker is down (killed) is delivered once a worker is back', async () => {
    await waitFor(async () => (await counts('hooks')).warm >= 1, 120_000, 250);
    const claim = (await call('POST', '/v1/pools/hooks/claims', {})).json();
    await recv.waitFor(1, eventsOf(claim.id, 'claim.activated'));
    // Once its delivery is recorded (a worker killed between a 2xx and that record would send
    // it again on restart: delivery is at-least-once, receivers deduplicate by webhook-id).
    await waitFor(
      async () =>
        (await s.db.webhookDelivery.count({
          where: { body: { contains: claim.id }, status: 'delivered' },
        })) === 1,
      10_000,
    );
    await s.worker.kill9();
    // The API commits the release and its outbox row; no worker runs to deliver it.
    expect((await call('DELETE', `/v1/claims/${claim.id}`)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 1000));
    expect(recv.received.filter(eventsOf(claim.id, 'claim.ended'))).toEqual([]);
    await s.restartWorker();
    const [ended] = await recv.waitFor(1, eventsOf(claim.id, 'claim.ended'), 60_000);
    expect(recv.verify(ended!, secret)).toBeTruthy();
  });

  it('a run that ends in the desktop arrives as run.finished with its exit code', async () => {
    await waitFor(async () => (await counts('hooks')).warm >= 1, 120_000, 250);
    const claim = (await call('POST', '/v1/pools/hooks/claims', {})).json();
    expect(claim.status).toBe('active');
    const started = await call('POST', `/v1/claims/${claim.id}/runs`, {
      argv: ['/bin/sh', '-c', 'exit 3'],
    });
    expect(started.statusCode, started.body).toBe(202);
    const runId: string = started.json().id;
    const [finished] = await recv.waitFor(
      1,
      (w) => w.payload.type === 'run.finished' && w.payload.data.run_id === runId,
      60_000,
    );
    expect(recv.verify(finished!, secret)).toBeTruthy();
    const run = (await call('GET', `/v1/runs/${runId}`)).json();
    expect(finished!.payload.data).toEqual({
      run_id: runId,
      claim_id: claim.id,
      status: run.status,
      exit_code: 3,
      reason: 'exited',
    });
    expect((await call('DELETE', `/v1/claims/${claim.id}`)).statusCode).toBe(200);
    await recv.waitFor(1, eventsOf(claim.id, 'claim.ended'));
  });

  it('lists every delivery as delivered with its response code, and each event once', async () => {
    await waitFor(
      async () =>
        listOf(WebhookDelivery)
          .parse((await call('GET', `/v1/webhooks/${webhookId}/deliveries?limit=200`)).json())
          .data.every((d) => d.status === 'delivered'),
      30_000,
    );
    const res = await call('GET', `/v1/webhooks/${webhookId}/deliveries?limit=200`);
    expect(res.statusCode).toBe(200);
    const deliveries = listOf(WebhookDelivery).parse(res.json()).data;
    for (const d of deliveries)
      expect(d).toMatchObject({ attempt_count: 1, last_status_code: 200 });
    expect(deliveries.length).toBeGreaterThanOrEqual(8);
    const ids = recv.received.map((w) => w.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
    // The other tenant sees none of it.
    const other = await s.api.inject({
      method: 'GET',
      url: `/v1/webhooks/${webhookId}/deliveries`,
      headers: s.other.auth,
    });
    expect(other.statusCode).toBe(404);
  });
});
