// Issue 32 end to end on the local backend: the real API, worker (its egress point) and desktops,
// on the test's fake internet. A pool's allowlist holds for every process of a claimed desktop;
// a denied name is one collapsed `egress.denied` line on the claim's page and one webhook; the
// admin's one-step allow (a PUT of the pool) reaches the running claim within a second; a pool
// that never uses egress keeps its desktops on loopback only. No packet leaves this machine: the
// worker's point asks only the fake DNS and may dial only the fake ranges.
import { WebhookWithSecret } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
  type FakeInternet,
} from '../support/fake-internet/fake-internet.js';
import { ensureEgressRelay } from '../../scripts/tools/egress-relay/tool.mjs';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

describe('egress of claimed local desktops', () => {
  let s: Stack;
  let internet: FakeInternet;
  let receiver: WebhookReceiver;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const sh = async (claimId: string, command: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, {
      argv: ['sh', '-c', command],
      timeout_ms: 20_000,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; stderr: string; exit_code: number };
  };
  const pool = (name: string, egress: unknown) =>
    call('PUT', `/v1/pools/${name}`, {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 2 },
      ...(egress === undefined ? {} : { egress }),
    });
  const warmPool = async (name: string, egress: unknown) => {
    const put = await pool(name, egress);
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await call('GET', `/v1/pools/${name}`)).json().counts.warm === 1,
      120_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', `/v1/pools/${name}/claims`, { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    return claim.json().id as string;
  };

  beforeAll(async () => {
    internet = await startFakeInternet();
    s = await startStack();
    s.workerEnv.CUBICLE_EGRESS_UPSTREAM_DNS = FAKE_DNS;
    s.workerEnv.CUBICLE_EGRESS_UPSTREAM_GUARD = FAKE_RANGES.join(',');
    // This source's relay, not whichever checkout last repointed the machine's shared link.
    s.workerEnv.CUBICLE_EGRESS_RELAY = await ensureEgressRelay({
      log: () => undefined,
      link: false,
    });
    await s.restartWorker();
    receiver = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['egress.denied'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    WebhookWithSecret.parse(hook.json());
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
    await internet?.stop();
  });

  it('a pool that never uses egress keeps loopback only', async () => {
    const claimId = await warmPool('offline', undefined);
    const net = await sh(claimId, "awk -F: 'NR > 2 { print $1 }' /proc/net/dev | tr -d ' '");
    expect(net.stdout.trim()).toBe('lo');
    expect((await sh(claimId, 'curl -sS -m 3 http://198.51.100.10/')).exit_code).not.toBe(0);
  });

  it('an allowlist holds, a denial is one event and one webhook, and one PUT allows it at once', async () => {
    const claimId = await warmPool('web', {
      mode: 'allowlist',
      allow: ['allowed.example.test'],
      deny: [],
    });
    const allowed = await sh(claimId, 'curl -sS -m 5 http://allowed.example.test/');
    expect(JSON.parse(allowed.stdout)).toMatchObject({ host: 'allowed.example.test' });
    // A retry loop against a denied name: one line with its count.
    const denied = await sh(
      claimId,
      'for i in 1 2 3; do curl -sS -m 5 http://denied.example.test/ >/dev/null 2>&1; done; echo done',
    );
    expect(denied.stdout.trim()).toBe('done');
    const deniedAt = Date.now();
    const hooks = await receiver.waitFor(1, (w) => w.payload.type === 'egress.denied', 10_000);
    console.log(
      `[egress] denial to webhook (test clock): ${Date.now() - deniedAt} ms after the loop`,
    );
    expect(hooks[0]!.payload.data).toMatchObject({ name: 'denied.example.test', protocol: 'dns' });
    await waitFor(
      async () => {
        const page = (await call('GET', `/v1/claims/${claimId}/egress-events`)).json();
        return page.data.some(
          (e: { name: string; count: number }) => e.name === 'denied.example.test' && e.count >= 3,
        );
      },
      10_000,
      200,
    );
    const page = (await call('GET', `/v1/claims/${claimId}/egress-events`)).json();
    expect(page.data.filter((e: { name: string }) => e.name === 'denied.example.test')).toEqual([
      expect.objectContaining({ rule: 'default:allowlist', protocol: 'dns' }),
    ]);

    // The Network tab's data: the allowed destination with its count beside the denied one.
    await waitFor(
      async () =>
        (await call('GET', `/v1/claims/${claimId}/egress`))
          .json()
          .destinations.some(
            (d: { verdict: string; name: string }) =>
              d.verdict === 'allowed' && d.name === 'allowed.example.test',
          ),
      10_000,
      200,
    );
    const destinations = (await call('GET', `/v1/claims/${claimId}/egress`)).json().destinations;
    expect(destinations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          verdict: 'allowed',
          name: 'allowed.example.test',
          port: 80,
          rule: 'pool.allow[0]: allowed.example.test',
        }),
        expect.objectContaining({
          verdict: 'denied',
          name: 'denied.example.test',
          rule: 'default:allowlist',
        }),
      ]),
    );

    // The admin's one step: the pool's allowlist gains the name; the running claim follows.
    const put = await pool('web', {
      mode: 'allowlist',
      allow: ['allowed.example.test', 'denied.example.test'],
      deny: [],
    });
    expect(put.statusCode, put.body).toBe(200);
    const changed = Date.now();
    let reached = '';
    while (Date.now() - changed < 3000) {
      reached = (await sh(claimId, 'curl -sS -m 2 http://denied.example.test/ 2>/dev/null')).stdout;
      if (reached.includes('denied.example.test')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const tookMs = Date.now() - changed;
    console.log(
      `[egress] one-step allow reached the running claim in ${tookMs} ms (incl. the curl)`,
    );
    expect(JSON.parse(reached)).toMatchObject({ host: 'denied.example.test' });
    expect(tookMs).toBeLessThan(1500);
  });

  it('a pool leaving none rolls its warm desktops; a desktop claimed under none says it has no link', async () => {
    const spec = (egress?: unknown) =>
      call('PUT', '/v1/pools/leaving', {
        ...s.backend.pool,
        autoscaling: { min: 1, initial: 1, max: 3 },
        ...(egress === undefined ? {} : { egress }),
      });
    const warmCount = async () => (await call('GET', '/v1/pools/leaving')).json().counts.warm;
    expect((await spec()).statusCode).toBe(201);
    await waitFor(async () => (await warmCount()) === 1, 120_000, 250);
    const held = await call('POST', '/v1/pools/leaving/claims', { ttl_seconds: 900 });
    expect(held.statusCode, held.body).toBe(201);
    const heldId = held.json().id as string;
    expect((await call('GET', `/v1/claims/${heldId}/egress`)).json()).toMatchObject({
      link: 'none',
      effective: { mode: 'none', mode_source: 'installation' },
    });
    // The refill: a warm desktop provisioned under none, as the old pool had them.
    await waitFor(async () => (await warmCount()) === 1, 120_000, 250);
    const before = (await call('GET', '/v1/pools/leaving')).json().generation as number;

    const put = await spec({ mode: 'allowlist', allow: ['allowed.example.test'], deny: [] });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().generation).toBe(before + 1);
    // The running desktop cannot gain a link: the answer says so beside the new policy.
    expect((await call('GET', `/v1/claims/${heldId}/egress`)).json()).toMatchObject({
      link: 'none',
      effective: { mode: 'allowlist', mode_source: 'pool' },
    });
    expect((await sh(heldId, 'curl -sS -m 3 http://allowed.example.test/')).exit_code).not.toBe(0);

    // The next claim gets a desktop of the new generation, linked, that reaches the allowed name.
    const next = await call('POST', '/v1/pools/leaving/claims', {
      ttl_seconds: 900,
      wait_seconds: 120,
    });
    expect(next.statusCode, next.body).toBe(201);
    const nextId = next.json().id as string;
    expect(next.json().sandbox.generation).toBe(before + 1);
    expect((await call('GET', `/v1/claims/${nextId}/egress`)).json().link).toBe('linked');
    const reached = await sh(nextId, 'curl -sS -m 5 http://allowed.example.test/');
    expect(JSON.parse(reached.stdout)).toMatchObject({ host: 'allowed.example.test' });
  });
});
