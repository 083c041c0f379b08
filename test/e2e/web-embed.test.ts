import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/stack.js';
import { canvasStats, pixelSum, saveArtifact, waitForFrame } from './support/web.js';
import { claimWithWindow, startWebStack, warmPool, type WebStack } from './support/web-stack.js';

/**
 * The embeddable viewer in real Chromium against the real stack: a view ticket minted through
 * the API, /embed/{ticket} served by `next start`, noVNC streaming the sandbox's desktop through
 * the API's proxy; the states a ticket can end in; CSP frame-ancestors from the tenant's origins.
 */
describe('embed page (/embed/{ticket}) in Chromium', () => {
  let w: WebStack;
  let claimId: string;
  let page: Page;

  const mint = async (id: string, body: object = { mode: 'view', ttl_seconds: 600 }) => {
    const res = await w.call('POST', `/v1/claims/${id}/viewer-tickets`, body);
    expect(res.statusCode).toBe(201);
    return res.json() as { id: string; ticket: string };
  };
  const embedUrl = (ticket: string) => `${w.web.url}/embed/${ticket}`;
  const stateOf = (p: Page) => p.locator('main.embed').getAttribute('data-state');

  beforeAll(async () => {
    w = await startWebStack();
    await warmPool(w, 'embed', 2);
    claimId = (await claimWithWindow(w, 'embed', 'Embedded window')).claim.id;
    page = await w.browser.newPage();
  });
  afterAll(async () => w?.close());

  it('renders the sandbox desktop with the launched window, view-only, with CSP frame-ancestors', async () => {
    const { ticket } = await mint(claimId);
    const response = await page.goto(embedUrl(ticket));
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe("frame-ancestors 'self'");
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    const stats = await waitForFrame(page);
    expect(stats.width).toBe(1280);
    await waitFor(async () => (await stateOf(page)) === 'active', 30_000);
    const windows = (await w.call('GET', `/v1/claims/${claimId}/windows`)).json().windows as {
      title: string;
      geometry: { x: number; y: number; w: number; h: number };
    }[];
    const frame = windows.find((x) => x.title === 'Embedded window')!.geometry;
    // The window's area is drawn (GTK's light theme) where the sandbox put it.
    const centre = await pixelSum(
      page,
      frame.x + Math.floor(frame.w / 2),
      frame.y + Math.floor(frame.h / 2),
    );
    expect(centre).toBeGreaterThan(300);
    const artifact = await saveArtifact(page, 'embed-desktop');
    expect(artifact).toMatch(/embed-desktop\.png$/);
    // Nothing but the canvas: no dashboard chrome on the embed page.
    expect(await page.locator('nav').count()).toBe(0);
  });

  it('frames only on the tenant embed origins (CSP enforced by Chromium)', async () => {
    const host: Server = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<!doctype html><iframe id="v" src="${decodeURIComponent(req.url!.slice(1))}" width="640" height="400"></iframe>`,
      );
    });
    host.listen(0, '127.0.0.1');
    await once(host, 'listening');
    // A different origin from the web app's (other port) frames the embed page.
    const origin = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
    try {
      const framedState = async () => {
        const { ticket } = await mint(claimId);
        const outer = await w.browser.newPage();
        await outer.goto(`${origin}/${encodeURIComponent(embedUrl(ticket))}`);
        const frame = outer.frames().find((f) => f !== outer.mainFrame())!;
        await frame.waitForLoadState();
        const state = await frame
          .locator('main.embed')
          .getAttribute('data-state', { timeout: 5_000 })
          .catch(() => null);
        await outer.close();
        return state;
      };
      expect(await framedState()).toBeNull();
      const patched = await w.call('PATCH', '/v1/tenant', { embed_origins: [origin] });
      expect(patched.statusCode).toBe(200);
      expect(await framedState()).not.toBeNull();
      const { ticket } = await mint(claimId);
      const res = await fetch(embedUrl(ticket));
      expect(res.headers.get('content-security-policy')).toBe(`frame-ancestors 'self' ${origin}`);
    } finally {
      host.close();
      await w.call('PATCH', '/v1/tenant', { embed_origins: [] });
    }
  });

  it('shows expired, revoked and invalid tickets as such', async () => {
    const short = await mint(claimId, { mode: 'view', ttl_seconds: 1 });
    await waitFor(
      async () =>
        (await w.call('POST', '/v1/viewer/introspect', { ticket: short.ticket })).json().state ===
        'expired',
      10_000,
    );
    await page.goto(embedUrl(short.ticket));
    expect(await stateOf(page)).toBe('expired');
    await expect(page.getByRole('heading', { name: 'Live view expired' }).count()).resolves.toBe(1);

    const revoked = await mint(claimId);
    expect((await w.call('DELETE', `/v1/viewer-tickets/${revoked.id}`)).statusCode).toBe(204);
    await page.goto(embedUrl(revoked.ticket));
    expect(await stateOf(page)).toBe('revoked');

    const [head, body] = short.ticket.split('.');
    await page.goto(embedUrl(`${head}.${body}.forgedsignatureforgedsignatureforgedsignature`));
    expect(await stateOf(page)).toBe('invalid');
    await page.goto(embedUrl('nonsense'));
    expect(await stateOf(page)).toBe('invalid');
    await expect(page.getByRole('heading', { name: 'Invalid link' }).count()).resolves.toBe(1);
  });

  it('an open viewer shows "ended" when the claim is released', async () => {
    const { ticket } = await mint(claimId);
    await page.goto(embedUrl(ticket));
    await waitForFrame(page);
    expect((await w.call('DELETE', `/v1/claims/${claimId}`)).statusCode).toBeLessThan(300);
    await waitFor(async () => (await stateOf(page)) === 'ended', 30_000);
    expect(await canvasStats(page)).toBeNull();
    await expect(page.getByRole('heading', { name: 'Session ended' }).count()).resolves.toBe(1);
    await saveArtifact(page, 'embed-ended');
  });
});
