import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rollupUsage } from '../../packages/control-plane/src/index.js';
import { waitFor } from './support/stack.js';
import { saveArtifact } from './support/web.js';
import { launchWindow, startWebStack, warmPool, type WebStack } from './support/web-stack.js';

/**
 * Usage and pool insights on the dashboard in real Chromium: a real desktop is claimed, driven
 * (a window screenshot, a click quoting it), watched through a real viewer stream and released;
 * the rollup counts it, and the pages chart it from the API (SVG, labelled, focusable, readable
 * in light and dark themes, chosen by the system or the theme toggle), with a CSV download, and
 * the claim's timeline shows the viewer and the screenshot the click was aimed at.
 */
// These run in the page; the test project has no DOM lib, so reach the browser's globals by type.
type PageGlobals = {
  getComputedStyle(e: unknown): { fill: string; backgroundColor: string; color: string };
  document: {
    activeElement: { getAttribute(name: string): string | null } | null;
    documentElement: unknown;
  };
};

/** WCAG contrast ratio of two computed `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (rgb: string) => {
    const [r, g, b] = rgb
      .match(/\d+(\.\d+)?/g)!
      .slice(0, 3)
      .map((c) => Number(c) / 255);
    const lin = (c: number) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r!) + 0.7152 * lin(g!) + 0.0722 * lin(b!);
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe('usage and insights on the dashboard in Chromium', () => {
  let w: WebStack;
  let page: Page;
  let claimId: string;
  let quotedShot: string;

  beforeAll(async () => {
    w = await startWebStack();
    await warmPool(w, 'usageweb', 1);
    const claim = await w.call('POST', '/v1/pools/usageweb/claims', { ttl_seconds: 600 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    // A window screenshot and a click aimed at it: the screenshot is kept for the timeline.
    const window = await launchWindow(w, claimId, 'usage-e2e');
    const shot = await w.call('POST', `/v1/claims/${claimId}/screenshot`, {
      window_id: window.window_id,
    });
    expect(shot.statusCode, shot.body).toBe(200);
    quotedShot = shot.json().screenshot_id;
    const click = await w.call('POST', `/v1/claims/${claimId}/input`, {
      action: 'click',
      window_id: window.window_id,
      screenshot_id: quotedShot,
      x: 20,
      y: 20,
    });
    expect(click.statusCode, click.body).toBe(200);
    // A viewer watches through the real stream proxy, then leaves.
    const ticket = await w.call('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' });
    expect(ticket.statusCode, ticket.body).toBe(201);
    const viewer = new WebSocket(
      `${w.apiUrl.replace('http', 'ws')}/v1/viewer/stream?ticket=${encodeURIComponent(ticket.json().ticket)}`,
      'binary',
    );
    const firstFrame = new Promise<void>((resolve, reject) => {
      viewer.once('message', () => resolve());
      viewer.once('error', reject);
    });
    await firstFrame; // the VNC server's greeting came through the bridge
    viewer.close();
    await waitFor(
      async () =>
        (await w.call('GET', `/v1/claims/${claimId}/viewer-connections`)).json().data[0]
          ?.disconnected_at != null,
      10_000,
      100,
    );
    const released = await w.call('DELETE', `/v1/claims/${claimId}`);
    expect(released.statusCode, released.body).toBe(200);
    await rollupUsage({ db: w.s.db });
    page = await w.browser.newPage();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => w?.close());

  it('tenant usage: stacked chart by pool and day with totals, focusable bars, CSV download', async () => {
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.waitForURL(`${w.web.url}/usage`);
    const chart = page.getByRole('figure', { name: /Claimed hours by pool/ });
    await chart.waitFor();
    const bar = chart.locator('rect[data-series="usageweb"]');
    expect(await bar.count()).toBe(1);
    const label = (await bar.getAttribute('aria-label'))!;
    expect(label).toMatch(/^usageweb, \d{4}-\d{2}-\d{2}: \d+ min$/);
    // Keyboard: the segment takes focus (Tab order) and names itself.
    await bar.focus();
    expect(
      await page.evaluate(() =>
        (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('aria-label'),
      ),
    ).toBe(label);
    const total = page.locator('[data-usage-totals] tr[data-total] td').first();
    expect(await total.textContent()).toBe('1');
    await saveArtifact(page, 'usage-light');

    const csv = await page.request.get(`${w.web.url}/usage/csv?days=30`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toContain('text/csv');
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'tenant_id,pool_id,pool,period_start,claims,claim_seconds,warm_seconds,warm_cpu_core_seconds,warm_memory_gib_seconds,runs,run_seconds,egress_denials,paused_seconds',
    );
    expect(lines).toHaveLength(2);
    const cells = lines[1]!.split(',');
    expect(cells[2]).toBe('usageweb');
    expect(Number(cells[4])).toBe(1);
    // Active seconds are the claim's own span (created → released: it was claimed at once).
    const span = (await w.call('GET', `/v1/claims/${claimId}`)).json();
    const seconds = (Date.parse(span.released_at) - Date.parse(span.created_at)) / 1000;
    expect(seconds).toBeGreaterThan(0.2);
    expect(Math.abs(Number(cells[5]) - seconds)).toBeLessThan(1);
    // Never paused: no paused seconds (the column pause and resume added).
    expect(Number(cells[12])).toBe(0);

    // Dark scheme: the chart's own palette, light text on a dark card.
    const fill = () =>
      bar.evaluate((el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).fill);
    const light = await fill();
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await fill()).not.toBe(light);
    const bg = await chart.evaluate(
      (el) => (globalThis as unknown as PageGlobals).getComputedStyle(el).backgroundColor,
    );
    expect(bg).toBe('rgb(21, 24, 30)');
    await saveArtifact(page, 'usage-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('pool insights: desktops by state over the last hour, the claim, its release reason', async () => {
    await page.goto(`${w.web.url}/pools`);
    await page.getByRole('link', { name: 'Insights of pool usageweb' }).click();
    await page.waitForURL(`${w.web.url}/pools/usageweb`);
    const chart = page.getByRole('figure', { name: /Desktops by state, last hour/ });
    await chart.waitFor();
    // 60 one-minute buckets; the desktop was warm in some and claimed in at least one.
    expect(await chart.locator('g[data-category]').count()).toBe(60);
    expect(await chart.locator('rect[data-series="warm"]').count()).toBeGreaterThan(0);
    expect(await chart.locator('rect[data-series="claimed"]').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-stat=claims]').textContent()).toBe('1');
    // Beside it, claim wait and time to first confirmed action p50/p99 over the same buckets.
    const latency = page.getByRole('figure', {
      name: /Claim wait and time to first confirmed action, last hour/,
    });
    await latency.waitFor();
    expect(await latency.locator('circle[aria-label^="claim wait p50, "]').count()).toBe(1);
    expect(await latency.locator('tbody tr').count()).toBe(60);
    expect(await page.locator('[data-stat=first-action]').textContent()).toMatch(/ \/ /);
    expect(await page.locator('[data-releases]').textContent()).toContain('released_by_client');
    await saveArtifact(page, 'pool-insights');
    await page.getByRole('link', { name: 'Last day' }).click();
    await page.getByRole('figure', { name: /Desktops by state, last day/ }).waitFor();
  });

  it('claim timeline: created, claimed, the click with its screenshot, viewer connected and gone, released', async () => {
    await page.goto(`${w.web.url}/claims/${claimId}`);
    const items = page.getByTestId('claim-timeline').locator('li');
    const texts = await items.allTextContents();
    const titles = texts.map((t) => t.replace(/^\S+ /, ''));
    expect(titles[0]).toBe('Claim created');
    expect(titles.some((t) => t.startsWith('Desktop claimed'))).toBe(true);
    expect(titles).toContain('Viewer ticket minted (view)');
    expect(titles).toContain('Viewer connected (view)');
    expect(titles.some((t) => t.startsWith('Viewer disconnected client_closed'))).toBe(true);
    expect(titles.at(-1)).toBe('Released released_by_client');
    // The click's entry shows the screenshot it quoted, loaded through the dashboard.
    const thumb = page.locator(`li[data-kind=action] img[data-screenshot-id="${quotedShot}"]`);
    await thumb.waitFor();
    await waitFor(
      async () =>
        (await thumb.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)) >
        0,
      10_000,
      100,
    );
    const direct = await page.request.get(
      `${w.web.url}/claims/${claimId}/screenshots/${quotedShot}`,
    );
    expect(direct.status()).toBe(200);
    expect(direct.headers()['content-type']).toBe('image/png');
    expect((await direct.body()).subarray(1, 4).toString()).toBe('PNG');
    await saveArtifact(page, 'claim-timeline');
  });

  it('theme toggle: dark and light persist across reloads; chart text and bars keep their contrast', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${w.web.url}/usage`);
    const chart = page.getByRole('figure', { name: /Claimed hours by pool/ });
    await chart.waitFor();
    // evaluate() runs its function in the page: it cannot close over a helper from this file.
    const style = (locator: ReturnType<Page['locator']>, prop: 'backgroundColor' | 'fill') =>
      locator.evaluate(
        (el, p) => (globalThis as unknown as PageGlobals).getComputedStyle(el)[p],
        prop,
      );
    const colours = async () => ({
      page: await style(page.locator('html'), 'backgroundColor'),
      card: await style(chart, 'backgroundColor'),
      text: await style(chart.locator('.chart-axis').first(), 'fill'),
      bar: await style(chart.locator('rect[data-series="usageweb"]'), 'fill'),
    });
    const theme = page.getByLabel('Theme');
    const readable = (c: Awaited<ReturnType<typeof colours>>) => {
      expect(contrast(c.text, c.card)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(c.bar, c.card)).toBeGreaterThanOrEqual(3);
    };

    const system = await colours();
    readable(system);
    await theme.selectOption('dark');
    const dark = await colours();
    expect(dark.card).toBe('rgb(21, 24, 30)');
    expect(dark.page).not.toBe(system.page);
    readable(dark);
    await saveArtifact(page, 'usage-theme-dark');

    // The choice outlives a reload (the cookie renders html[data-theme] server-side) and beats
    // the system's light preference.
    await page.reload();
    await chart.waitFor();
    expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');
    expect(await colours()).toEqual(dark);
    expect(await theme.inputValue()).toBe('dark');

    // Light wins over a dark system preference; "System" follows it again.
    await page.emulateMedia({ colorScheme: 'dark' });
    await theme.selectOption('light');
    await page.reload();
    await chart.waitFor();
    const light = await colours();
    expect(light).toEqual(system);
    readable(light);
    await theme.selectOption('system');
    expect(await colours()).toEqual(dark);
    await page.reload();
    await chart.waitFor();
    expect(await page.locator('html').getAttribute('data-theme')).toBeNull();
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
