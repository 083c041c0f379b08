import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveArtifact } from './support/web.js';
import { startWebStack, warmPool, type WebStack } from './support/web-stack.js';

/**
 * The claim page's runs panel in real Chromium against the real stack: secret names (never
 * values), a run started from the form, its output followed live with stdout and stderr told
 * apart, and its exit code.
 */
describe('runs on the dashboard in Chromium', () => {
  let w: WebStack;
  let page: Page;
  let claimId: string;
  const secretValue = `s3cr3t-${Date.now()}-value`;

  beforeAll(async () => {
    w = await startWebStack();
    await warmPool(w, 'runsweb', 1);
    const claim = await w.call('POST', '/v1/pools/runsweb/claims', {
      ttl_seconds: 900,
      secrets: { AGENT_TOKEN: secretValue },
    });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    page = await w.browser.newPage();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => w?.close());

  it('starts a run from the form and shows its output live, coloured by stream, with the exit code', async () => {
    await page.goto(`${w.web.url}/claims/${claimId}`);
    expect(await page.getByTestId('secret-names').textContent()).toContain('AGENT_TOKEN');
    await page
      .getByLabel('Command')
      .fill(
        JSON.stringify([
          '/bin/sh',
          '-c',
          'for i in 1 2 3; do echo out-$i; sleep 0.3; done; echo oops >&2; echo token=$AGENT_TOKEN; exit 4',
        ]),
      );
    await page.getByLabel('AGENT_TOKEN').check();
    await page.getByRole('button', { name: 'Start run' }).click();
    const exit = page.getByTestId('run-exit');
    await exit.waitFor({ timeout: 60_000 });
    expect(await exit.textContent()).toContain('exit code 4');
    const output = page.locator('.run-output');
    expect(await output.locator('span.stdout').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('out-1')]),
    );
    const text = (await output.textContent())!;
    expect(text).toContain('out-1\nout-2\nout-3\n');
    expect(text).toContain('token=[secret:AGENT_TOKEN]');
    expect(text).not.toContain(secretValue);
    const stderr = output.locator('span.stderr');
    expect(await stderr.first().textContent()).toContain('oops');
    // Runs in the page; the test project has no DOM lib, so reach the browser's global by type.
    const colourOf = (el: unknown) =>
      (
        globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }
      ).getComputedStyle(el).color;
    const colour = await stderr.first().evaluate(colourOf);
    const stdoutColour = await output.locator('span.stdout').first().evaluate(colourOf);
    expect(colour).not.toBe(stdoutColour);
    expect(await page.getByTestId('run-status').textContent()).toContain('failed');
    expect(await page.content()).not.toContain(secretValue);
    await saveArtifact(page, 'dashboard-runs');
    const runs = (await w.call('GET', `/v1/claims/${claimId}/runs`)).json().data;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      status: 'failed',
      exit_code: 4,
      secret_names: ['AGENT_TOKEN'],
    });
  });
});
