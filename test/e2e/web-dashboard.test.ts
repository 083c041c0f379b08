import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisOptionsFromUrl } from '../harness/index.js';
import { waitFor } from './support/stack.js';
import { browserStorage, saveArtifact, waitForFrame } from './support/web.js';
import { launchWindow, startWebStack, warmPool, type WebStack } from './support/web-stack.js';

/**
 * The dashboard in real Chromium against the real stack: sign in with an API key (kept
 * server-side), see the pool, claim a desktop, watch it live, release it, manage keys, sign out.
 */
describe('dashboard in Chromium', () => {
  let w: WebStack;
  let page: Page;
  let redis: Redis;
  let claimId: string;

  const sessionKeys = async () => (await redis.keys(`${w.web.redisPrefix}session:*`)).length;

  beforeAll(async () => {
    w = await startWebStack();
    redis = new Redis({ ...redisOptionsFromUrl(w.redis.url), maxRetriesPerRequest: 2 });
    await warmPool(w, 'web', 1);
    page = await w.browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
  });
  afterAll(async () => {
    redis?.disconnect();
    await w?.close();
  });

  it('refuses a wrong key and sends signed-out visitors to sign in', async () => {
    await page.goto(`${w.web.url}/claims`);
    expect(new URL(page.url()).pathname).toBe('/login');
    // The dashboard itself may not be framed by anyone (clickjacking).
    const login = await fetch(`${w.web.url}/login`);
    expect(login.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    await page.getByLabel('API key').fill('cbk_wrongwrongwrongwrongwrongwrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.locator('form [role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('not valid');
    expect(await sessionKeys()).toBe(0);
  });

  it('signs in: the browser holds only an httpOnly session id, the key stays on the server', async () => {
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
    const cookies = await w.browser.context.cookies(w.web.url);
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({ name: 'cubicle_session', httpOnly: true, sameSite: 'Lax' });
    expect(cookie!.value).not.toContain(w.apiKey);
    expect(await sessionKeys()).toBe(1);
    const stored = await redis.get((await redis.keys(`${w.web.redisPrefix}session:*`))[0]!);
    expect(stored).not.toContain(w.apiKey);
    expect(await page.content()).not.toContain(w.apiKey);
    const storage = await browserStorage(page);
    expect(storage).not.toContain(w.apiKey);
  });

  it('shows the pool with its live counts and autoscaling', async () => {
    const row = page.locator('tr[data-pool=web]');
    await row.waitFor();
    expect(await row.locator('[data-count=warm] strong').textContent()).toBe('1');
    expect(await row.getByLabel('max of web').inputValue()).toBe('2');
    await row.getByLabel('max of web').fill('3');
    await row.getByRole('button', { name: 'Save', exact: true }).click();
    await row.getByText('Saved').waitFor();
    await saveArtifact(page, 'dashboard-pools');
    expect((await w.call('GET', '/v1/pools/web')).json().autoscaling).toEqual({
      min: 0,
      initial: 1,
      max: 3,
    });
  });

  it('claims a desktop from the pool and watches it live', async () => {
    await page
      .locator('tr[data-pool=web]')
      .getByRole('button', { name: 'Claim a desktop' })
      .click();
    await page.waitForURL(/\/claims\/clm_[0-9a-z]{26}$/, { timeout: 60_000 });
    claimId = new URL(page.url()).pathname.split('/')[2]!;
    expect((await w.call('GET', `/v1/claims/${claimId}`)).json().status).toBe('active');
    await launchWindow(w, claimId, 'Watched from the dashboard');
    await page.getByRole('button', { name: 'Take control' }).click();
    await waitForFrame(page);
    await page.locator('[data-live-status=connected]').waitFor();
    await saveArtifact(page, 'dashboard-live-view');
    // The screenshot comes through the web server with the session's key, never without it.
    const shot = await page.request.get(`${w.web.url}/claims/${claimId}/screenshot`);
    expect(shot.status()).toBe(200);
    expect(shot.headers()['content-type']).toBe('image/png');
    expect((await shot.body()).subarray(1, 4).toString()).toBe('PNG');
    expect((await fetch(`${w.web.url}/claims/${claimId}/screenshot`)).status).toBe(401);
  });

  it('extends the claim from its page', async () => {
    await page.getByLabel(/^TTL seconds for/).fill('1200');
    await page.getByRole('button', { name: 'Extend' }).click();
    await page.getByText('Extended').waitFor();
    expect((await w.call('GET', `/v1/claims/${claimId}`)).json().ttl_seconds).toBe(1200);
  });

  it('releases the claim', async () => {
    await page.getByRole('button', { name: 'Release' }).click();
    await waitFor(
      async () => (await w.call('GET', `/v1/claims/${claimId}`)).json().status === 'released',
      30_000,
    );
    await page.goto(`${w.web.url}/claims/${claimId}`);
    expect(await page.locator('h1 .badge').textContent()).toBe('released');
  });

  it('creates an API key shown once, revokes it, and lists both in the audit log', async () => {
    await page.goto(`${w.web.url}/api-keys`);
    await page.getByLabel('Key name').fill('from-dashboard');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('new-key').textContent())!;
    expect(shown).toMatch(/^cbk_/);
    await saveArtifact(page, 'dashboard-new-key');
    const ok = await fetch(`${w.apiUrl}/v1/pools`, {
      headers: { authorization: `Bearer ${shown}` },
    });
    expect(ok.status).toBe(200);
    await page.reload();
    expect(await page.content()).not.toContain(shown);
    const row = page.locator(`tr[data-key="${shown.slice(0, 12)}"]`);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.locator('.badge', { hasText: 'revoked' }).waitFor();
    const refused = await fetch(`${w.apiUrl}/v1/pools`, {
      headers: { authorization: `Bearer ${shown}` },
    });
    expect(refused.status).toBe(401);
    await page.goto(`${w.web.url}/audit`);
    for (const action of ['api_key.create', 'api_key.revoke', 'claim.create', 'claim.release'])
      expect(await page.locator(`tr[data-action="${action}"]`).count()).toBeGreaterThan(0);
  });

  it('sets the origins allowed to embed the viewer', async () => {
    await page.goto(`${w.web.url}/settings`);
    await page
      .locator('textarea[name=origins]')
      .fill('https://app.example.com\nhttp://localhost:8081');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved').waitFor();
    expect((await w.call('GET', '/v1/tenant')).json().embed_origins).toEqual([
      'https://app.example.com',
      'http://localhost:8081',
    ]);
  });

  it('signs out: the server-side session is deleted', async () => {
    await page.goto(`${w.web.url}/pools`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${w.web.url}/login`);
    expect(await sessionKeys()).toBe(0);
    expect(await w.browser.context.cookies(w.web.url)).toHaveLength(0);
    await page.goto(`${w.web.url}/pools`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('a member key sees no admin pages; once revoked, its session ends', async () => {
    const created = (
      await w.call('POST', '/v1/api-keys', { name: 'member', role: 'member' })
    ).json();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(created.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
    expect(await page.locator('nav').getByText('(member)').count()).toBe(1);
    expect(await page.locator('nav a[href="/api-keys"]').count()).toBe(0);
    expect(await sessionKeys()).toBe(1);
    expect((await w.call('DELETE', `/v1/api-keys/${created.id}`)).statusCode).toBe(204);
    await page.goto(`${w.web.url}/claims`);
    await page.waitForURL(`${w.web.url}/login?expired=1`);
    expect(await sessionKeys()).toBe(0);
  });
});
