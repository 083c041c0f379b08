import { AppError } from '@cubicle/contract/errors';
import type { ScreenshotImage } from '@cubicle/contract/guest';
import { sqlPoolOf, type Db } from '@cubicle/db';

/**
 * SCREENSHOT_RETENTION_DAYS bounds how long a kept screenshot lives; pruneClaimScreenshots
 * (run with the hourly usage rollup) deletes older ones. Claims' deletion removes theirs.
 */
export const SCREENSHOT_RETENTION_DAYS = 7;

/** Who a screenshot belongs to. */
export interface ScreenshotOwner {
  tenantId: string;
  claimId: string;
}

/**
 * keepScreenshot stores a window screenshot (PNG) the guest returned, so a pixel action that
 * quotes it can be shown later, and drops the same window's earlier unquoted one in the same
 * statement: pixel input must quote its window's latest screenshot, so an older one nobody
 * quoted can never be referenced. What is kept per claim is therefore one per window plus the
 * quoted ones. Whole-display and JPEG captures are not kept (pixel input cannot quote the
 * first; the second only saves bandwidth for a caller that already has it).
 *
 * The caller does not call this for claims holding secrets: a secret shown on screen is
 * pixels, which no value-based redaction can find.
 */
export async function keepScreenshot(db: Db, owner: ScreenshotOwner, image: ScreenshotImage) {
  if (image.window_id === null || image.format !== 'png') return;
  await sqlPoolOf(db).query({
    name: 'cubicle_keep_screenshot_v1',
    text: `WITH dropped AS (
             DELETE FROM claim_screenshots
             WHERE claim_id = $1 AND window_id = $4 AND NOT is_referenced AND screenshot_id <> $2)
           INSERT INTO claim_screenshots (claim_id, screenshot_id, tenant_id, window_id, width,
                                          height, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (claim_id, screenshot_id) DO UPDATE
             SET window_id = EXCLUDED.window_id, width = EXCLUDED.width,
                 height = EXCLUDED.height, data = EXCLUDED.data, created_at = now()`,
    values: [
      owner.claimId,
      image.screenshot_id,
      owner.tenantId,
      image.window_id,
      image.width,
      image.height,
      Buffer.from(image.data, 'base64'),
    ],
  });
}

/** markScreenshotQuoted keeps the screenshot an action quoted beyond its window's next one. */
export async function markScreenshotQuoted(db: Db, owner: ScreenshotOwner, screenshotId: string) {
  await sqlPoolOf(db).query({
    name: 'cubicle_mark_screenshot_v1',
    text: `UPDATE claim_screenshots SET is_referenced = true
           WHERE claim_id = $1 AND screenshot_id = $2 AND tenant_id = $3 AND NOT is_referenced`,
    values: [owner.claimId, screenshotId, owner.tenantId],
  });
}

/** getClaimScreenshot returns a kept screenshot's PNG; unknown, expired or another tenant's is 404. */
export async function getClaimScreenshot(
  db: Db,
  tenantId: string,
  claimId: string,
  screenshotId: string,
): Promise<Buffer> {
  const { rows } = await sqlPoolOf(db).query<{ data: Buffer }>(
    `SELECT data FROM claim_screenshots
     WHERE claim_id = $1 AND screenshot_id = $2 AND tenant_id = $3
       AND created_at > now() - make_interval(days => $4)`,
    [claimId, screenshotId, tenantId, SCREENSHOT_RETENTION_DAYS],
  );
  if (!rows[0]) throw new AppError('not_found', 'no such screenshot kept for this claim');
  return rows[0].data;
}

/**
 * pruneClaimScreenshots deletes screenshots past their retention, and the unquoted ones of
 * claims that ended (no action can quote them any more). Returns how many rows went.
 */
export async function pruneClaimScreenshots(db: Db, now: Date = new Date()): Promise<number> {
  const { rowCount } = await sqlPoolOf(db).query(
    `DELETE FROM claim_screenshots s
     WHERE s.created_at < $1::timestamptz - make_interval(days => $2)
        OR (NOT s.is_referenced AND EXISTS (
              SELECT 1 FROM claims c WHERE c.id = s.claim_id AND c.released_at IS NOT NULL))`,
    [now, SCREENSHOT_RETENTION_DAYS],
  );
  return rowCount ?? 0;
}
