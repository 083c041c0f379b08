import { statement } from '@cubicle/db';

// `claim_screenshots`: window screenshots kept so a pixel action that quotes one can be shown
// later (usage/claim-screenshots.ts says which are kept). On node-postgres: `data` is a Buffer.

/**
 * Keeps a screenshot and drops the same window's earlier unquoted one in the same statement (an
 * older one nobody quoted can never be referenced).
 */
export const keepScreenshotStatement = statement<
  never,
  [
    claimId: string,
    screenshotId: string,
    tenantId: string,
    windowId: number,
    width: number,
    height: number,
    png: Buffer,
  ]
>(
  'cubicle_keep_screenshot_v1',
  `WITH dropped AS (
     DELETE FROM claim_screenshots
     WHERE claim_id = $1 AND window_id = $4 AND NOT is_referenced AND screenshot_id <> $2)
   INSERT INTO claim_screenshots (claim_id, screenshot_id, tenant_id, window_id, width,
                                  height, data)
   VALUES ($1, $2, $3, $4, $5, $6, $7)
   ON CONFLICT (claim_id, screenshot_id) DO UPDATE
     SET window_id = EXCLUDED.window_id, width = EXCLUDED.width,
         height = EXCLUDED.height, data = EXCLUDED.data, created_at = now()`,
);

/** Marks a screenshot quoted: it outlives its window's next one. */
export const markScreenshotQuotedStatement = statement<
  never,
  [claimId: string, screenshotId: string, tenantId: string]
>(
  'cubicle_mark_screenshot_v1',
  `UPDATE claim_screenshots SET is_referenced = true
   WHERE claim_id = $1 AND screenshot_id = $2 AND tenant_id = $3 AND NOT is_referenced`,
);

/** A kept screenshot's PNG, if younger than `retentionDays`. */
export const selectClaimScreenshot = statement<
  { data: Buffer },
  [claimId: string, screenshotId: string, tenantId: string, retentionDays: number]
>(
  'cubicle_get_screenshot_v1',
  `SELECT data FROM claim_screenshots
   WHERE claim_id = $1 AND screenshot_id = $2 AND tenant_id = $3
     AND created_at > now() - make_interval(days => $4)`,
);

/** Deletes screenshots past retention, and the unquoted ones of claims that ended. */
export const pruneClaimScreenshotsStatement = statement<never, [now: Date, retentionDays: number]>(
  'cubicle_prune_screenshots_v1',
  `DELETE FROM claim_screenshots s
   WHERE s.created_at < $1::timestamptz - make_interval(days => $2)
      OR (NOT s.is_referenced AND EXISTS (
            SELECT 1 FROM claims c WHERE c.id = s.claim_id AND c.released_at IS NOT NULL))`,
);
