import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollupUsage } from '../../packages/control-plane/src/index.js';
import { waitFor } from './support/stack.js';
import { saveArtifact } from './support/web.js';
import { startWebStack, warmPool, type WebStack } from './support/web-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The dashboard's resource pages in real Chromium against the real stack: webhooks with their
 * deliveries (a failed one retried from the page), stored secrets (names and who may use them,
 * never values), runs across claims with a run's output followed live; the pool form's field
 * errors; the shell's own not-found page; the favicon; the usage axis's ticks; audit targets.
 */
describe('resource pages of the dashboard in Chromium', () => {
  let w: WebStack;
  let page: Page;
  let recv: WebhookReceiver;
  let claimId: string;
  let webhookId: string;
  const storedValue = `stored-${Date.now()}-do-not-show`;
  const typedValue = `typed-${Date.now()}-do-not-show`;

  beforeAll(async () => {
    w = await startWebStack();
    recv = await startWebhookReceiver();
    // The receiver is down at first: the claim's delivery fails until it is retried.
    recv.answer(() => ({ status: 503, body: 'down for maintenance' }));
    const hook = await w.call('POST', '/v1/webhooks', {
      url: recv.url,
      events: ['claim.activated'],
      description: 'e2e receiver',
    });
    expect(hook.statusCode, hook.body).toBe(201);
    webhookId = hook.json().id;
    await warmPool(w, 'resweb', 1);
    const claim = await w.call('POST', '/v1/pools/resweb/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    page = await w.browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => {
    await recv?.close();
    await w?.close();
  });

  it('webhooks: the endpoint with its failed delivery, retried from the page until delivered', async () => {
    await recv.waitFor(1);
    // Disabled, the next attempt is refused at once: the delivery fails for good.
    const disabled = await w.call('PATCH', `/v1/webhooks/${webhookId}`, { enabled: false });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const deliveries = async () =>
      (await w.call('GET', `/v1/webhooks/${webhookId}/deliveries`)).json().data as {
        id: string;
        status: string;
        attempt_count: number;
      }[];
    await waitFor(async () => (await deliveries())[0]?.status === 'failed', 30_000, 100);
    const [failed] = await deliveries();
    expect((await w.call('PATCH', `/v1/webhooks/${webhookId}`, { enabled: true })).statusCode).toBe(
      200,
    );
    recv.answer(() => ({ status: 204 }));

    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.waitForURL(`${w.web.url}/webhooks`);
    const endpoint = page.locator(`section[data-webhook="${webhookId}"]`);
    expect(await endpoint.locator('h2').textContent()).toBe(recv.url);
    expect(await endpoint.textContent()).toContain('claim.activated');
    const row = endpoint.locator(`tr[data-delivery="${failed!.id}"]`);
    expect(await row.getAttribute('data-status')).toBe('failed');
    // Its attempts: the receiver's 503s, then the refusal that ended it.
    expect(failed!.attempt_count).toBeGreaterThanOrEqual(2);
    expect(await row.textContent()).toContain('the endpoint is disabled');
    await saveArtifact(page, 'webhooks-failed');

    const received = recv.received.length;
    await row.getByRole('button', { name: 'Retry' }).click();
    await recv.waitFor(received + 1);
    await waitFor(async () => (await row.getAttribute('data-status')) === 'delivered', 20_000, 200);
    // The same event id on the retried attempt: receivers deduplicate by it.
    const ids = new Set(recv.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(await row.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    const again = await w.call('POST', `/v1/webhooks/${webhookId}/deliveries/${failed!.id}/retry`);
    expect(again.statusCode).toBe(409);
    // Another tenant's key finds no such delivery.
    const foreign = await w.s.api.inject({
      method: 'POST',
      url: `/v1/webhooks/${webhookId}/deliveries/${failed!.id}/retry`,
      headers: w.s.other.auth,
    });
    expect(foreign.statusCode).toBe(404);

    // Rotating shows the new signing secret once, and it signs the next delivery.
    await endpoint.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.getByTestId('webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await saveArtifact(page, 'webhooks-delivered');
  });

  it('secrets: names, versions and who may use them, never a value; stored and deleted from the page', async () => {
    const put = await w.call('PUT', '/v1/secrets/API_TOKEN', { value: storedValue });
    expect(put.statusCode, put.body).toBe(201);
    await page.getByRole('link', { name: 'Secrets', exact: true }).click();
    await page.waitForURL(`${w.web.url}/secrets`);
    const token = page.locator('tr[data-secret="API_TOKEN"]');
    expect(await token.locator('td').first().textContent()).toBe('API_TOKEN');
    expect(await token.locator('[data-usable-by]').getAttribute('data-usable-by')).toBe('admins');

    // A name the contract refuses: the error sits beside the name, which stays as typed.
    await page.getByLabel('Secret name').fill('lower-case');
    await page.getByLabel('Secret value').fill(typedValue);
    await page.getByRole('button', { name: 'Store secret' }).click();
    const nameError = page.locator('#secret-name-error');
    await nameError.waitFor();
    expect(await nameError.textContent()).toContain('upper-case');
    expect(await page.getByLabel('Secret name').inputValue()).toBe('lower-case');

    await page.getByLabel('Secret name').fill('MODEL_KEY');
    await page.getByLabel('Secret value').fill(typedValue);
    await page.getByLabel('Usable by').selectOption('members');
    await page.getByRole('button', { name: 'Store secret' }).click();
    const stored = page.locator('tr[data-secret="MODEL_KEY"]');
    await stored.waitFor();
    expect(await stored.locator('[data-usable-by]').getAttribute('data-usable-by')).toBe('members');
    const html = await page.content();
    expect(html).not.toContain(storedValue);
    expect(html).not.toContain(typedValue);
    await saveArtifact(page, 'secrets');

    await token.getByRole('button', { name: 'Delete' }).click();
    await token.waitFor({ state: 'detached' });
    const names = (await w.call('GET', '/v1/secrets'))
      .json()
      .data.map((s: { name: string }) => s.name);
    expect(names).toEqual(['MODEL_KEY']);
  });

  it('runs: every claim’s runs in one list, and a run’s output followed live to its exit code', async () => {
    const quick = await w.call('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['/bin/sh', '-c', 'echo done; exit 0'],
    });
    expect(quick.statusCode, quick.body).toBe(202);
    const quickId = quick.json().id;
    await waitFor(
      async () => (await w.call('GET', `/v1/runs/${quickId}`)).json().status === 'succeeded',
      60_000,
      200,
    );
    // The first line now, the second only after the page has shown the first.
    const slow = await w.call('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['/bin/sh', '-c', 'echo first-line; read go; echo second-line-$go >&2; exit 3'],
    });
    expect(slow.statusCode, slow.body).toBe(202);
    const slowId = slow.json().id;

    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.waitForURL(`${w.web.url}/runs`);
    const rows = page.locator('table[data-runs] tbody tr');
    await waitFor(async () => (await rows.count()) === 2, 10_000, 200);
    expect(await rows.first().getAttribute('data-run')).toBe(slowId);
    expect(await rows.nth(1).getAttribute('data-status')).toBe('succeeded');
    expect(await rows.nth(1).textContent()).toContain(claimId);

    await page.getByRole('link', { name: slowId }).click();
    await page.waitForURL(`${w.web.url}/runs/${slowId}`);
    const output = page.locator('.run-output');
    await output.getByText('first-line').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('run-exit').count()).toBe(0);
    expect(await page.getByTestId('run-status').textContent()).toContain('running');

    const go = await w.call('POST', `/v1/runs/${slowId}/stdin`, { data: 'now\n' });
    expect(go.statusCode, go.body).toBe(202);
    const exit = page.getByTestId('run-exit');
    await exit.waitFor({ timeout: 60_000 });
    expect(await exit.textContent()).toContain('exit code 3');
    expect(await output.locator('span.stderr').first().textContent()).toContain('second-line-now');
    expect(await page.getByTestId('run-status').textContent()).toContain('failed');
    await saveArtifact(page, 'run-live');

    // The status filter keeps one state; another tenant lists none of these runs.
    await page.goto(`${w.web.url}/runs?status=succeeded`);
    expect(await page.locator('table[data-runs] tbody tr').count()).toBe(1);
    const foreign = await w.s.api.inject({
      method: 'GET',
      url: '/v1/runs',
      headers: w.s.other.auth,
    });
    expect(foreign.statusCode, foreign.body).toBe(200);
    expect(foreign.json().data).toEqual([]);
  });

  it('an invalid pool shows each field’s error beside it and keeps what was typed', async () => {
    await page.goto(`${w.web.url}/pools`);
    const form = page.getByRole('form', { name: 'Autoscaling of resweb' });
    await form.getByLabel('min of resweb').fill('3');
    await form.getByLabel('initial of resweb').fill('1');
    await form.getByLabel('max of resweb').fill('2');
    await form.getByRole('button', { name: 'Save' }).click();
    const error = form.locator('[data-field=initial] .field-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('must satisfy min ≤ initial ≤ max');
    expect(await form.getByLabel('initial of resweb').getAttribute('aria-invalid')).toBe('true');
    expect(await form.textContent()).not.toContain('invalid body');
    // Still as typed after the page's own refresh (every 3 s).
    await page.waitForTimeout(3_500);
    expect(await form.getByLabel('min of resweb').inputValue()).toBe('3');
    expect(await form.getByLabel('initial of resweb').inputValue()).toBe('1');
    expect(await form.getByLabel('max of resweb').inputValue()).toBe('2');
    await saveArtifact(page, 'pool-field-error');
    const pool = (await w.call('GET', '/v1/pools/resweb')).json();
    expect(pool.autoscaling).toEqual({ min: 0, initial: 1, max: 2 });
  });

  it('an unknown path renders the dashboard’s not-found page inside its shell, and the favicon is served', async () => {
    const answer = await page.goto(`${w.web.url}/no/such/page`);
    await page.getByTestId('not-found').waitFor();
    // Loading boundaries sit in each page's folder, not over the whole group, so the page decides
    // before anything streams: a real 404 (it was a streamed 200 with a group-level boundary).
    expect(answer?.status()).toBe(404);
    expect(await page.locator('meta[name="robots"][content="noindex"]').count()).toBeGreaterThan(0);
    expect(await page.getByRole('heading', { name: 'Not found' }).count()).toBe(1);
    expect(await page.locator('nav.nav').getByRole('link', { name: 'Pools' }).count()).toBe(1);
    await saveArtifact(page, 'not-found');

    const icon = await page.request.get(`${w.web.url}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toBe('image/x-icon');
    expect((await icon.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
  });

  it('audit: a call on a claim’s shell names the claim as its target, not a type', async () => {
    const shell = await w.call('POST', `/v1/claims/${claimId}/shell`, { argv: ['/bin/true'] });
    expect(shell.statusCode, shell.body).toBe(200);
    // The API decorates itself with auditSettled (audit-plugin.ts); its type augmentation is not
    // visible from here.
    await (w.s.api as { auditSettled?: () => Promise<void> }).auditSettled?.();
    await page.goto(`${w.web.url}/audit`);
    const row = page.locator('tr[data-action="claim_shell.run"]').first();
    const target = row.locator('td[data-target-type]');
    expect(await target.textContent()).toContain(claimId);
  });

  it('usage: the y-axis counts in one unit, from 0 in equal round steps, without repeats', async () => {
    const released = await w.call('DELETE', `/v1/claims/${claimId}`);
    expect(released.statusCode, released.body).toBe(200);
    await rollupUsage({ db: w.s.db });
    await page.goto(`${w.web.url}/usage?days=7`);
    const chart = page.getByRole('figure', { name: /Claimed hours by pool/ });
    await chart.waitFor();
    const labels = await chart.locator('g[data-tick] text').allTextContents();
    expect(labels.length).toBeGreaterThanOrEqual(3);
    expect(new Set(labels).size).toBe(labels.length);
    const units = new Set(labels.map((l) => l.split(' ')[1]));
    expect(units.size).toBe(1);
    const values = labels.map((l) => Number(l.split(' ')[0]));
    expect(values[0]).toBe(0);
    const step = values[1]! - values[0]!;
    values.forEach((v, i) => expect(v).toBeCloseTo(i * step, 6));
    // The top tick covers the bar: the claim's seconds in the axis's unit.
    const claim = (await w.call('GET', `/v1/claims/${claimId}`)).json();
    const seconds = (Date.parse(claim.released_at) - Date.parse(claim.created_at)) / 1000;
    const size = { s: 1, min: 60, h: 3600 }[[...units][0] as 's' | 'min' | 'h'];
    expect(values.at(-1)! * size).toBeGreaterThanOrEqual(seconds - 1);
    await saveArtifact(page, 'usage-ticks');
  });
});
