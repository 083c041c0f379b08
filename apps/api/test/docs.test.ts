import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type Browser } from '../../../test/e2e/support/web.js';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';

type Doc = { paths: Record<string, Record<string, { operationId: string }>> };

/** /docs: the interactive reference, self-hosted, rendered by a real Chromium under its CSP. */
describe('API reference at /docs', () => {
  let fx: FullAppFixture;
  let url: string;
  let browser: Browser;
  beforeAll(async () => {
    fx = await fullAppFixture();
    url = await fx.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await fx?.close();
  });

  it('serves a page whose scripts and styles all come from this server, under a strict CSP', async () => {
    const res = await fx.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(res.body).not.toMatch(/(src|href)="https?:/);
    const assets = [...res.body.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      const answer = await fx.app.inject({ method: 'GET', url: asset });
      expect(answer.statusCode, asset).toBe(200);
    }
    const unknown = await fx.app.inject({ method: 'GET', url: '/docs/assets/index.html' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('route_not_found');
  });

  it('renders every operation in Chromium with no CSP violation and no request elsewhere', async () => {
    const doc = (await fx.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json() as Doc;
    const operations = Object.values(doc.paths).flatMap((ops) => Object.keys(ops)).length;
    const page = await browser.newPage();
    const problems: string[] = [];
    const origins = new Set<string>();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    await page.goto(`${url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    expect(await page.locator('.opblock').count()).toBe(operations);
    // The error codes table is in the rendered description.
    expect(await page.locator('.info table').textContent()).toContain('rate_limited');
    // An operation opened shows its example request body.
    await page.locator('#operations-claims-createClaim').click();
    await expect
      .poll(() => page.locator('#operations-claims-createClaim').textContent())
      .toContain('wait_seconds');
    expect(problems).toEqual([]);
    expect([...origins]).toEqual([url]);
    await page.close();
  });
});
