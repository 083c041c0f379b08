import { CreateClaimRequest, PoolSpec, ViewerConnectionQuery } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaim,
  getClaimScreenshot,
  listViewerConnections,
  pruneClaimScreenshots,
  recordViewerConnected,
  recordViewerDisconnected,
  releaseClaim,
} from '../src/index.js';
import { keepActionScreenshots } from '../src/usage/keep-action-screenshots.js';
import { seedWarm, world, type World } from './setup.js';

/** Bytes with a PNG signature, different per screenshot: the table keeps bytes as given. */
const pngBytes = (id: string) =>
  Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(id)]);
const shot = (id: string, windowId: number | null, format: 'png' | 'jpeg' = 'png') => ({
  screenshot_id: id,
  window_id: windowId,
  format,
  data: pngBytes(id).toString('base64'),
  width: 8,
  height: 4,
  scale: 1,
  origin: { x: 0, y: 0 },
});
const pixelResult = (screenshotId: string) => ({
  effect: 'refused',
  route: 'pixel',
  retry_safe: true,
  screenshot_id: screenshotId,
  duration_ms: 1,
  error: { code: 'stale_screenshot', hint: 'take a new screenshot' },
});

/** A claim's history beyond its actions, on real Postgres: viewer connections and screenshots. */
describe('claim history: viewer connections and kept screenshots', () => {
  let w: World;
  let claimId: string;
  let ticketId: string;

  beforeAll(async () => {
    w = await world();
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'history',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 5 } }),
    );
    const [sandboxId] = await seedWarm(w.db, w.tenantId, pool.id, 2);
    const { claim } = await createClaim(
      w.deps,
      w.tenantId,
      'history',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    claimId = claim.id;
    ticketId = newId('viewer_ticket');
    await w.db.viewerTicket.create({
      data: {
        id: ticketId,
        tenantId: w.tenantId,
        claimId,
        sandboxId: claim.sandbox?.id ?? sandboxId!,
        mode: 'view',
        expiresAt: new Date(Date.now() + 600_000),
      },
    });
  });
  afterAll(async () => w?.close());

  it('records each viewer stream opened and closed, oldest first, paged, for its tenant only', async () => {
    const fact = { tenantId: w.tenantId, claimId, ticketId, mode: 'view' as const };
    const first = await recordViewerConnected(w.db, fact, new Date('2026-04-01T10:00:00Z'));
    const second = await recordViewerConnected(w.db, fact, new Date('2026-04-01T10:05:00Z'));
    await recordViewerDisconnected(w.db, first!, 'client_closed', new Date('2026-04-01T10:02:00Z'));
    // A second close (the revocation racing the client) keeps the first.
    await recordViewerDisconnected(w.db, first!, 'revoked', new Date('2026-04-01T10:03:00Z'));

    const page1 = await listViewerConnections(
      w.db,
      w.tenantId,
      claimId,
      ViewerConnectionQuery.parse({ limit: 1 }),
    );
    expect(page1.data).toEqual([
      {
        id: first,
        claim_id: claimId,
        ticket_id: ticketId,
        mode: 'view',
        connected_at: '2026-04-01T10:00:00.000Z',
        disconnected_at: '2026-04-01T10:02:00.000Z',
        close_reason: 'client_closed',
      },
    ]);
    const page2 = await listViewerConnections(
      w.db,
      w.tenantId,
      claimId,
      ViewerConnectionQuery.parse({ limit: 1, cursor: page1.next_cursor }),
    );
    expect(page2.data.map((c) => [c.id, c.disconnected_at])).toEqual([[second, null]]);
    expect(page2.next_cursor).toBeNull();
    await expect(
      listViewerConnections(w.db, w.otherTenantId, claimId, ViewerConnectionQuery.parse({})),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('keeps the latest window screenshot and every quoted one; not whole-display or JPEG ones', async () => {
    const keep = (operation: string, answer: unknown) =>
      keepActionScreenshots(w.db, w.tenantId, claimId, operation, answer);
    await keep('screenshot', shot('p1', 7));
    await keep('act.pixel', pixelResult('p1')); // quoted: kept for good
    await keep('screenshot', shot('p2', 7));
    await keep('observe', { screenshot: shot('p3', 7) }); // replaces p2 (never quoted)
    await keep('screenshot', shot('p4', null));
    await keep('screenshot', shot('p5', 7, 'jpeg'));

    expect(await getClaimScreenshot(w.db, w.tenantId, claimId, 'p1')).toEqual(pngBytes('p1'));
    expect(await getClaimScreenshot(w.db, w.tenantId, claimId, 'p3')).toEqual(pngBytes('p3'));
    for (const gone of ['p2', 'p4', 'p5'])
      await expect(getClaimScreenshot(w.db, w.tenantId, claimId, gone)).rejects.toMatchObject({
        code: 'not_found',
      });
    await expect(getClaimScreenshot(w.db, w.otherTenantId, claimId, 'p1')).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('prunes unquoted screenshots of ended claims and every one past retention', async () => {
    await releaseClaim(w.deps, w.tenantId, claimId);
    expect(await pruneClaimScreenshots(w.db)).toBe(1); // p3: latest of its window, never quoted
    await expect(getClaimScreenshot(w.db, w.tenantId, claimId, 'p3')).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await getClaimScreenshot(w.db, w.tenantId, claimId, 'p1')).toEqual(pngBytes('p1'));
    const eightDaysOn = new Date(Date.now() + 8 * 86_400_000);
    expect(await pruneClaimScreenshots(w.db, eightDaysOn)).toBe(1);
    await expect(getClaimScreenshot(w.db, w.tenantId, claimId, 'p1')).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
