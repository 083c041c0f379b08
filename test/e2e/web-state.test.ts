// Issue 34 on the dashboard, in real Chromium against the real API and its object store: the
// Profiles and Snapshots pages list the tenant's rows (written through the stack's database
// client, as a claim with `profile` and a snapshot request would leave them: making them through
// a desktop would only add minutes), link the claims they came from, and an admin's Delete (after
// the confirm) removes one through the API, after which the page and the API no longer have it.
// A profile a claim holds offers no Delete (the API would answer 409 profile_in_use).
import { newId } from '@cubicle/db';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveArtifact } from './support/web.js';
import { startWebStack, type WebStack } from './support/web-stack.js';

describe('the Profiles and Snapshots pages', () => {
  let w: WebStack;
  let page: Page;
  const heldBy = newId('claim');
  const sourceClaim = newId('claim');
  const snapshotId = newId('snapshot');

  beforeAll(async () => {
    w = await startWebStack();
    const { db, tenantId } = w.s;
    const savedAt = new Date('2026-12-01T10:00:00.000Z');
    await db.profile.create({
      data: {
        id: newId('profile'),
        tenantId,
        name: 'cust-42',
        version: 3,
        sizeBytes: 5n * 1024n * 1024n,
        fileCount: 17,
        savedAt,
        lastClaimId: sourceClaim,
      },
    });
    await db.profile.create({
      data: { id: newId('profile'), tenantId, name: 'cust-held', liveClaimId: heldBy },
    });
    await db.snapshot.create({
      data: {
        id: snapshotId,
        tenantId,
        name: 'before-upgrade',
        status: 'ready',
        paths: ['.'],
        sourceClaimId: sourceClaim,
        sourcePool: 'desk',
        sourcePoolId: newId('pool'),
        sizeBytes: 2n * 1024n * 1024n,
        storedBytes: 1024n * 1024n,
        fileCount: 9,
        readyAt: savedAt,
        expiresAt: new Date('2027-01-01T00:00:00.000Z'),
      },
    });

    page = await w.browser.newPage();
    await page.goto(`${w.web.url}/login`);
    await page.getByLabel('API key').fill(w.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.web.url}/pools`);
  });
  afterAll(async () => {
    await w?.close();
  });

  it('lists profiles with size and holder, and deletes a free one', async () => {
    await page.getByRole('link', { name: 'Profiles' }).click();
    await page.waitForURL(`${w.web.url}/profiles`);
    const free = page.locator('tr[data-profile="cust-42"]');
    const held = page.locator('tr[data-profile="cust-held"]');
    await free.waitFor();
    const cells = await free.locator('td').allTextContents();
    expect(cells.slice(0, 5)).toEqual(['cust-42', '3', '5.0 MiB', '17', '2026-12-01 10:00:00']);
    expect(cells[6]).toBe('—');
    expect(await free.getByRole('link', { name: sourceClaim }).getAttribute('href')).toBe(
      `/claims/${sourceClaim}`,
    );
    expect(await held.getByRole('link', { name: heldBy }).count()).toBe(1);
    expect(await held.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await saveArtifact(page, 'dashboard-profiles');

    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('Delete profile cust-42');
      void dialog.accept();
    });
    await free.getByRole('button', { name: 'Delete' }).click();
    await free.waitFor({ state: 'detached' });
    expect((await w.call('GET', '/v1/profiles/cust-42')).statusCode).toBe(404);
    expect((await w.call('GET', '/v1/profiles/cust-held')).statusCode).toBe(200);
    await page.reload();
    await held.waitFor();
    expect(await free.count()).toBe(0);
  });

  it('lists a snapshot with status, sizes, source claim and expiry, and deletes it', async () => {
    await page.getByRole('link', { name: 'Snapshots' }).click();
    await page.waitForURL(`${w.web.url}/snapshots`);
    const row = page.locator(`tr[data-snapshot="${snapshotId}"]`);
    await row.waitFor();
    // The forking explanation, once the page (not its loading state) is in.
    expect(await page.locator('main').textContent()).toContain('from_snapshot');
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 5)).toEqual([
      `before-upgrade${snapshotId}`,
      'ready',
      '.',
      '2.0 MiB (1.0 MiB)',
      '9',
    ]);
    expect(cells[5]).toContain('(desk)');
    expect(await row.getByRole('link', { name: sourceClaim }).getAttribute('href')).toBe(
      `/claims/${sourceClaim}`,
    );
    expect(cells[7]).toBe('2027-01-01 00:00:00');
    await saveArtifact(page, 'dashboard-snapshots');

    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('Delete snapshot before-upgrade');
      void dialog.accept();
    });
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await w.call('GET', `/v1/snapshots/${snapshotId}`)).statusCode).toBe(404);
    await page.reload();
    await page.getByText('No snapshots.').waitFor();
  });
});
