import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveArtifact } from './support/web.js';
import { startWebStack, type WebStack } from './support/web-stack.js';

const PAGE = 'file:///usr/share/doc/base-passwd/users-and-groups.html';

/**
 * A pool's prime on the dashboard in real Chromium against the real stack: the pools page says
 * what the desktops have open, edits it (a refusal names the API's field), and saving the
 * autoscaling form keeps it. No desktop is started (the pool keeps nothing warm).
 */
describe('pool prime on the dashboard', () => {
  let w: WebStack;
  let page: Page;
  const pool = async () => (await w.call('GET', '/v1/pools/webprime')).json();

  beforeAll(async () => {
    w = await startWebStack();
    const put = await w.call('PUT', '/v1/pools/webprime', {
      image: 'local',
      autoscaling: { min: 0, initial: 0, max: 1 },
      prime: { apps: [{ app: 'browser', url: PAGE }] },
    });
    expect(put.statusCode).toBe(201);
    page = await w.browser.newPage();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => w?.close());

  it('shows the apps and pages a pool primes', async () => {
    const row = page.locator('tr[data-pool=webprime]');
    await row.waitFor();
    expect(await row.locator('[data-prime]').getAttribute('data-prime')).toBe('browser');
    expect(await row.locator('.prime-summary').textContent()).toContain(PAGE);
  });

  it('edits the prime: a refusal names the field, a valid one rolls the desktops', async () => {
    const row = page.locator('tr[data-pool=webprime]');
    const box = row.getByLabel('Prime apps of webprime (JSON)');
    const before = (await pool()).generation as number;
    await box.fill('{"apps": [{"app": "terminal", "url": "https://example.com/"}]}');
    await row.getByRole('button', { name: 'Save prime' }).click();
    const alert = row.locator('form.prime [role=alert]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('prime.apps.0.url');
    expect((await pool()).prime.apps[0].app).toBe('browser');

    await box.fill('{"apps": [{"app": "office.writer"}], "timeout_seconds": 90}');
    await row.getByRole('button', { name: 'Save prime' }).click();
    await row.getByText('Saved: warm desktops roll').waitFor();
    await saveArtifact(page, 'dashboard-pool-prime');
    const after = await pool();
    expect(after.prime).toEqual({
      apps: [{ app: 'office.writer' }],
      timeout_seconds: 90,
      restore: null,
    });
    expect(after.generation).toBe(before + 1);
  });

  it('keeps the prime when the autoscaling form is saved', async () => {
    const row = page.locator('tr[data-pool=webprime]');
    await row.getByLabel('max of webprime').fill('2');
    await row.locator('form.autoscaling').getByRole('button', { name: 'Save' }).click();
    await row.locator('form.autoscaling').getByText('Saved').waitFor();
    const after = await pool();
    expect(after.autoscaling.max).toBe(2);
    expect(after.prime?.apps).toEqual([{ app: 'office.writer' }]);
  });
});
