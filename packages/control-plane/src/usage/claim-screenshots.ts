import { AppError } from '@cubicle/contract/errors';
import type { ScreenshotImage } from '@cubicle/contract/guest';
import { sqlOf, type Db } from '@cubicle/db';
import {
  keepScreenshotStatement,
  markScreenshotQuotedStatement,
  pruneClaimScreenshotsStatement,
  selectClaimScreenshot,
} from '../repositories/usage-screenshots.js';

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
  await sqlOf(db).exec(
    keepScreenshotStatement,
    owner.claimId,
    image.screenshot_id,
    owner.tenantId,
    image.window_id,
    image.width,
    image.height,
    Buffer.from(image.data, 'base64'),
  );
}

/** markScreenshotQuoted keeps the screenshot an action quoted beyond its window's next one. */
export async function markScreenshotQuoted(db: Db, owner: ScreenshotOwner, screenshotId: string) {
  await sqlOf(db).exec(markScreenshotQuotedStatement, owner.claimId, screenshotId, owner.tenantId);
}

/** getClaimScreenshot returns a kept screenshot's PNG; unknown, expired or another tenant's is 404. */
export async function getClaimScreenshot(
  db: Db,
  tenantId: string,
  claimId: string,
  screenshotId: string,
): Promise<Buffer> {
  const row = await sqlOf(db).row(
    selectClaimScreenshot,
    claimId,
    screenshotId,
    tenantId,
    SCREENSHOT_RETENTION_DAYS,
  );
  if (!row) throw new AppError('not_found', 'no such screenshot kept for this claim');
  return row.data;
}

/**
 * pruneClaimScreenshots deletes screenshots past their retention, and the unquoted ones of
 * claims that ended (no action can quote them any more). Returns how many rows went.
 */
export async function pruneClaimScreenshots(db: Db, now: Date = new Date()): Promise<number> {
  return sqlOf(db).exec(pruneClaimScreenshotsStatement, now, SCREENSHOT_RETENTION_DAYS);
}
