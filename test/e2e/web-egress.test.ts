// Issue 32 on the dashboard, in real Chromium against the real API, worker (its egress point)
// and a real desktop on the test's fake internet: a claim's Network section lists the
// destinations its desktop reached and was refused, with the counts the egress point reported,
// and an admin's one-step "Allow for this pool" edits the pool's allowlist through the API
// (audited `pool.apply`), after which the running claim reaches the name; a desktop claimed
// under `none` says it has no link to gain. No packet leaves this
// machine: the worker's point asks only the fake DNS and may dial only the fake ranges.
import type { ClaimEgress } from '@cubicle/contract/api';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
  type FakeInternet,
} from '../support/fake-internet/fake-internet.js';
import { waitFor } from './support/stack.js';
import { saveArtifact } from './support/web.js';
import { startWebStack, type WebStack } from './support/web-stack.js';

describe('a claim’s Network section on the dashboard', () => {
  let w: WebStack;
  let internet: FakeInternet;
  let page: Page;
  let claimId: string;
  const sh = async (command: string) => {
    const res = await w.call('POST', `/v1/claims/${claimId}/shell`, {
      argv: ['sh', '-c', command],
      timeout_ms: 20_000,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; exit_code: number };
  };
  const egress = async () =>
    (await w.call('GET', `/v1/claims/${claimId}/egress`)).json() as ClaimEgress;

  beforeAll(async () => {
    internet = await startFakeInternet();
    w = await startWebStack();
    w.s.workerEnv.CUBICLE_EGRESS_UPSTREAM_DNS = FAKE_DNS;
    w.s.workerEnv.CUBICLE_EGRESS_UPSTREAM_GUARD = FAKE_RANGES.join(',');
    await w.s.restartWorker();
    const put = await w.call('PUT', '/v1/pools/webnet', {
      ...w.s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 2 },
      egress: { mode: 'allowlist', allow: ['allowed.example.test'], deny: [] },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await w.call('GET', '/v1/pools/webnet')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await w.call('POST', '/v1/pools/webnet/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id as string;

    // Two allowed requests; a retry loop of three against a name the pool does not allow.
    for (let i = 0; i < 2; i++)
      expect((await sh('curl -sS -m 5 http://allowed.example.test/')).exit_code).toBe(0);
    await sh(
      'for i in 1 2 3; do curl -sS -m 5 http://denied.example.test/ >/dev/null 2>&1; done; true',
    );
    await waitFor(
      async () => {
        const { destinations } = await egress();
        return (
          destinations.some((d) => d.verdict === 'allowed' && d.name === 'allowed.example.test') &&
          destinations.some(
            (d) => d.verdict === 'denied' && d.name === 'denied.example.test' && d.count >= 3,
          )
        );
      },
      10_000,
      200,
    );

    page = await w.browser.newPage();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => {
    await w?.close();
    await internet?.stop();
  });

  it('lists allowed and denied destinations with the counts the egress point reported', async () => {
    const { destinations } = await egress();
    await page.goto(`${w.web.url}/claims/${claimId}`);
    const section = page.locator('section[aria-labelledby=network]');
    await section.waitFor();
    expect(await section.textContent()).toContain('allowlist');
    const rowOf = (verdict: string, name: string) =>
      section.locator('tbody tr', { hasText: name }).filter({ hasText: verdict });
    for (const d of destinations.filter((x) => x.name?.endsWith('.example.test'))) {
      const row = rowOf(d.verdict, d.name!);
      await row.first().waitFor();
      const cells = await row.first().locator('td').allTextContents();
      // Destination, verdict, rule, count: as the API answers them.
      expect(cells[1]).toBe(d.verdict);
      expect(cells[2]).toBe(d.rule);
      expect(Number(cells[3])).toBe(d.count);
    }
    const allowed = rowOf('allowed', 'allowed.example.test');
    expect(await allowed.first().locator('td').nth(0).textContent()).toContain(
      'allowed.example.test:80',
    );
    expect(Number(await allowed.first().locator('td').nth(3).textContent())).toBeGreaterThanOrEqual(2);
    const denied = rowOf('denied', 'denied.example.test');
    expect(Number(await denied.first().locator('td').nth(3).textContent())).toBeGreaterThanOrEqual(3);
    // Only a denial can be allowed; a desktop provisioned with a link says nothing about links.
    expect(await allowed.getByRole('button', { name: 'Allow for this pool' }).count()).toBe(0);
    expect(await section.locator('[data-testid=egress-no-link]').count()).toBe(0);
    await section.scrollIntoViewIfNeeded();
    await saveArtifact(page, 'dashboard-claim-network');
  });

  it('"Allow for this pool" edits the pool’s allowlist (audited) and the running claim reaches the name', async () => {
    const before = (await w.call('GET', '/v1/pools/webnet')).json();
    const poolApplies = async () =>
      (
        (await w.call('GET', '/v1/audit-events?limit=100')).json().data as {
          action: string;
          target_id: string | null;
          result: string;
          actor: unknown;
        }[]
      ).filter(
        (e) =>
          e.action === 'pool.apply' &&
          e.result === 'success' &&
          (e.target_id === before.id || e.target_id === 'webnet'),
      );
    const appliesBefore = (await poolApplies()).length;
    expect(appliesBefore).toBeGreaterThanOrEqual(1);
    expect(before.egress.allow).toEqual(['allowed.example.test']);
    await page.goto(`${w.web.url}/claims/${claimId}`);
    const section = page.locator('section[aria-labelledby=network]');
    const denied = section
      .locator('tbody tr', { hasText: 'denied.example.test' })
      .filter({ hasText: 'denied' })
      .first();
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('for every claim of pool webnet');
      void dialog.accept();
    });
    await denied.getByRole('button', { name: 'Allow for this pool' }).click();
    await section.getByText('Allowed denied.example.test for pool webnet').waitFor();

    const after = (await w.call('GET', '/v1/pools/webnet')).json();
    expect(after.egress).toEqual({
      mode: 'allowlist',
      allow: ['allowed.example.test', 'denied.example.test'],
      deny: [],
    });
    // allowlist → allowlist: applied in place, no roll.
    expect(after.generation).toBe(before.generation);
    // One more successful pool.apply on this pool, by the signed-in admin's key.
    await waitFor(async () => (await poolApplies()).length === appliesBefore + 1, 5_000, 100);
    expect((await poolApplies()).at(0)?.actor).toMatchObject({ type: 'api_key' });
    const reached = await sh('curl -sS -m 5 http://denied.example.test/');
    expect(JSON.parse(reached.stdout)).toMatchObject({ host: 'denied.example.test' });
    expect((await egress()).effective.allow.map((r) => r.rule)).toContain('denied.example.test');
  });

  it('a desktop claimed under none says it will not gain a link', async () => {
    const put = await w.call('PUT', '/v1/pools/webnone', {
      ...w.s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await w.call('GET', '/v1/pools/webnone')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await w.call('POST', '/v1/pools/webnone/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    await page.goto(`${w.web.url}/claims/${claim.json().id as string}`);
    const line = page.locator('section[aria-labelledby=network] [data-testid=egress-no-link]');
    await line.waitFor();
    expect(await line.textContent()).toContain('will not gain a link');
    await line.scrollIntoViewIfNeeded();
    await saveArtifact(page, 'dashboard-claim-network-no-link');
  });
});
