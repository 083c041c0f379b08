import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ViewerCloseCodes } from '@cubicle/contract/api';
import { viewerChannel } from '@cubicle/control-plane';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisOptionsFromUrl } from '../harness/index.js';
import { KEYSYM, RawRfbClient, refusedUpgrade } from './support/rfb-client.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

const GTK_APP = fileURLToPath(
  new URL('../../packages/driver-guest/test/fixtures/gtk-test-app.py', import.meta.url),
);

interface Row {
  element_token: string;
  role: string;
  name?: string;
  frame?: { x: number; y: number; w: number; h: number };
}

/**
 * Live view end to end: a real desktop claimed through the API, the GTK test app in it, and a
 * hostile raw RFB client on the stream proxy. With a view ticket its clicks and keys do not
 * reach the app (state read through the guest driver); with a control ticket the same click
 * does, which is what proves the view check could fail. The claim's release closes an open
 * viewer within a second; an expired ticket is refused before the upgrade.
 */
describe('live view through the stream proxy', () => {
  let s: Stack;
  let claimId: string;
  let windowId: number;
  let baseUrl: string;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const drive = (path: string, payload?: unknown) =>
    call(payload === undefined ? 'GET' : 'POST', `/v1/claims/${claimId}/${path}`, payload);
  const mint = async (mode: 'view' | 'control', ttl_seconds = 600, claim = claimId) => {
    const res = await call('POST', `/v1/claims/${claim}/viewer-tickets`, { mode, ttl_seconds });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; ticket: string };
  };
  const streamUrl = async (ticket: string) => {
    const res = await s.api.inject({
      method: 'POST',
      url: '/v1/viewer/introspect',
      payload: { ticket },
      headers: { host: new URL(baseUrl).host },
    });
    expect(res.statusCode).toBe(200);
    return res.json().stream_url as string;
  };
  const rows = async () => {
    const snap = await drive('observe', { window_id: windowId, include_screenshot: false });
    expect(snap.statusCode).toBe(200);
    return snap.json().elements as Row[];
  };
  const count = async () => {
    const label = (await rows()).find((r) => r.role === 'label' && r.name?.startsWith('count: '));
    expect(label, 'the counter label').toBeDefined();
    return Number(label!.name!.slice('count: '.length));
  };
  const center = async () => {
    const button = (await rows()).find((r) => r.role === 'push_button' && r.name === 'Increment');
    expect(button?.frame, 'the Increment button with screen coordinates').toBeDefined();
    const f = button!.frame!;
    return {
      x: f.x + Math.floor(f.w / 2),
      y: f.y + Math.floor(f.h / 2),
      token: button!.element_token,
    };
  };

  beforeAll(async () => {
    s = await startStack();
    baseUrl = await s.api.listen({ host: '127.0.0.1', port: 0 });
    const put = await call('PUT', '/v1/pools/viewer', {
      image: 'local',
      autoscaling: { min: 0, initial: 1, max: 2 },
    });
    expect(put.statusCode).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/viewer')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/viewer/claims', { ttl_seconds: 900 });
    expect(claim.statusCode).toBe(201);
    claimId = claim.json().id;
    // The sandbox sees none of the checkout: the test app goes in through the files API.
    const app = '/tmp/gtk-test-app.py';
    const copied = await drive('files/write', {
      path: app,
      content: readFileSync(GTK_APP, 'utf8'),
    });
    expect(copied.statusCode, copied.body).toBe(200);
    const launched = await drive('windows/launch', {
      // The app quits when its stdin ends: give it one that stays open.
      argv: ['/bin/sh', '-c', 'sleep 3600 | /usr/bin/python3 "$0" 3 viewer-e2e', app],
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    windowId = launched.json().window.window_id;
    const ready = await drive('verify', {
      window_id: windowId,
      predicates: [
        {
          kind: 'element_exists',
          selector: { role: 'push_button', name: 'Increment' },
          unique: true,
        },
      ],
      timeout_ms: 10_000,
    });
    expect(ready.json().status, ready.body).toBe('satisfied');
  });
  afterAll(async () => s?.close());

  it('a view ticket: clicks, keys and clipboard from a raw RFB client change nothing; frames still arrive', async () => {
    const { x, y, token } = await center();
    // Keyboard focus on the button, so a delivered Return or space would press it.
    const focused = await drive('act', {
      window_id: windowId,
      element_token: token,
      action: 'focus',
    });
    expect(focused.statusCode).toBe(200);
    expect(await count()).toBe(0);

    const viewer = await RawRfbClient.connect(await streamUrl((await mint('view')).ticket));
    await viewer.handshake();
    viewer.requestFrame(false);
    const first = await viewer.nextFramebufferUpdate();
    expect(first.bytes).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      viewer.click(x, y);
      viewer.key(KEYSYM.Return);
      viewer.key(KEYSYM.space);
    }
    viewer.cutText('pasted by a viewer');
    // Still a viewer in good standing: a pixel request after the input is answered.
    viewer.requestFrame(false);
    expect((await viewer.nextFramebufferUpdate()).bytes).toBeGreaterThan(0);
    // Give any input that got through time to land, then read the app's state.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await count()).toBe(0);
    viewer.close();
  });

  it('a control ticket: the same click presses the button (so the view check can fail)', async () => {
    const { x, y } = await center();
    const before = await count();
    const controller = await RawRfbClient.connect(await streamUrl((await mint('control')).ticket));
    await controller.handshake();
    controller.click(x, y);
    await waitFor(async () => (await count()) === before + 1, 10_000, 200);
    controller.close();
  });

  it('an expired ticket is refused with 401 before the upgrade', async () => {
    const t = await mint('view', 1);
    const url = await streamUrl(t.ticket);
    await new Promise((r) => setTimeout(r, 1_200));
    const refused = await refusedUpgrade(url);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({
      code: 'invalid_ticket',
      details: { state: 'expired' },
    });
  });

  it('a claim the worker reclaims at its TTL closes its viewer: the worker announces the end', async () => {
    const subscriber = new Redis(redisOptionsFromUrl(s.workerEnv.REDIS_URL!));
    const announced: string[] = [];
    subscriber.on('message', (_channel, message) => announced.push(message));
    await subscriber.subscribe(viewerChannel(s.workerEnv.QUEUE_PREFIX!));
    try {
      const claim = await call('POST', '/v1/pools/viewer/claims', {
        ttl_seconds: 4,
        wait_seconds: 60,
      });
      expect(claim.statusCode, claim.body).toBe(201);
      const { id, expires_at } = claim.json() as { id: string; expires_at: string };
      const viewer = await RawRfbClient.connect(
        await streamUrl((await mint('view', 600, id)).ticket),
      );
      await viewer.handshake();
      const closed = await viewer.closed;
      expect(closed.code).toBe(ViewerCloseCodes.ended);
      console.log(
        `[viewer e2e] TTL reclaim → viewer closed ${closed.at - Date.parse(expires_at)} ms after expires_at`,
      );
      expect((await call('GET', `/v1/claims/${id}`)).json().release_reason).toBe('ttl_expired');
      // Only the worker released this claim; its message is what reached the API's streams.
      expect(announced).toContainEqual(JSON.stringify({ kind: 'claim', claim_id: id }));
    } finally {
      subscriber.disconnect();
    }
  });

  it('releasing the claim closes an open viewer within a second, and its tickets stop working', async () => {
    const t = await mint('view');
    const url = await streamUrl(t.ticket);
    const viewer = await RawRfbClient.connect(url);
    await viewer.handshake();
    viewer.requestFrame(false);
    await viewer.nextFramebufferUpdate();
    const start = Date.now();
    expect((await call('DELETE', `/v1/claims/${claimId}`)).statusCode).toBe(200);
    const closed = await viewer.closed;
    const delay = closed.at - start;
    console.log(`[viewer e2e] release → viewer closed in ${delay} ms (code ${closed.code})`);
    expect(closed.code).toBe(ViewerCloseCodes.ended);
    expect(delay).toBeLessThanOrEqual(1_500);
    const refused = await refusedUpgrade(url);
    expect(refused.status).toBe(401);
    expect(refused.body.error.details).toEqual({ state: 'ended' });
  });
});
