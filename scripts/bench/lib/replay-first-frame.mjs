// The replay page's first-frame time, for `npm run bench:recording` (replay_first_frame_p50_ms).
//
// The page (apps/web/app/components/replay/replay-player.tsx) writes, once, the time from its
// navigation's start to its <video>'s first decoded frame (`loadeddata` or the first
// requestVideoFrameCallback, whichever comes first; performance.now() counts from the
// navigation) into <html data-replay-first-frame-ms>. A share link's page needs no session:
// mint one (`POST /v1/claims/{id}/replay-links`) and open its replay_url on the web app.

const MARK = 'document.documentElement.dataset.replayFirstFrameMs';

/**
 * replayFirstFrameMs opens `url` (a replay page) in a Playwright page and answers the ms from its
 * navigation to its video's first decoded frame. Give each sample a fresh page (no media cache).
 */
export async function replayFirstFrameMs(page, url, { timeoutMs = 30_000 } = {}) {
  await page.goto(url);
  await page.waitForFunction(MARK, null, { timeout: timeoutMs });
  return Number(await page.evaluate(MARK));
}

/** p50 of a list of numbers (the median; the lower middle for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}
