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

  it('"Try it out" calls the server the page came from, on its random port, with no error box', async () => {
    // The document names no host: its one server is relative, so the page's own origin answers.
    const served = (await fx.app.inject({ method: 'GET', url: '/docs/openapi.json' })).json() as {
      servers: { url: string }[];
      jsonSchemaDialect?: string;
    };
    expect(served.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(served.jsonSchemaDialect).toBeUndefined();

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const calls: string[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/v1/')) calls.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${url}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    // Swagger UI reports schema problems (e.g. an unsupported jsonSchemaDialect) in a red box.
    expect(await page.locator('.errors-wrapper').count()).toBe(0);

    // An optional query parameter stays empty after "Try it out": nothing is sent unasked.
    const list = page.locator('#operations-claims-listClaims');
    await list.locator('.opblock-summary').click();
    await list.getByRole('button', { name: 'Try it out' }).click();
    const cursor = list.locator('tr[data-param-name="cursor"] input');
    await expect.poll(() => cursor.count()).toBe(1);
    expect(await cursor.inputValue()).toBe('');

    const op = page.locator('#operations-system-getVersion');
    await op.locator('.opblock-summary').click();
    await op.getByRole('button', { name: 'Try it out' }).click();
    await op.getByRole('button', { name: 'Execute' }).click();
    const status = op.locator('.live-responses-table tbody .response-col_status').first();
    await expect.poll(() => status.textContent(), { timeout: 15_000 }).toContain('200');
    expect(await op.locator('.live-responses-table').textContent()).toContain('cubicle-api');
    expect(calls).toEqual([`200 ${url}/v1/version`]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
