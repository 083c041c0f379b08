import type { ActionResult, ObserveResponse, ScreenshotImage } from '@cubicle/contract/guest';
import type { Db } from '@cubicle/db';
import { keepScreenshot, markScreenshotQuoted } from './claim-screenshots.js';

/**
 * keepActionScreenshots is what a guest call's answer leaves for the claim timeline: a window
 * screenshot (from `screenshot` or `observe`) is kept, and an action that quotes one marks it
 * kept for good. It never throws — a lost thumbnail must not turn a delivered action into an
 * error the caller might retry.
 */
export async function keepActionScreenshots(
  db: Db,
  tenantId: string,
  claimId: string,
  operation: string,
  answer: unknown,
): Promise<void> {
  const owner = { tenantId, claimId };
  try {
    if (operation === 'screenshot') await keepScreenshot(db, owner, answer as ScreenshotImage);
    else if (operation === 'observe') {
      const shot = (answer as ObserveResponse).screenshot;
      if (shot) await keepScreenshot(db, owner, shot);
    } else if (operation === 'act.pixel' || operation === 'act.element') {
      const quoted = (answer as ActionResult).screenshot_id;
      if (quoted) await markScreenshotQuoted(db, owner, quoted);
    }
  } catch {
    // Deliberately dropped: the timeline then shows the screenshot id without a thumbnail.
  }
}
