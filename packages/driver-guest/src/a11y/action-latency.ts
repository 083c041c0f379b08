import type { AppMirror } from './app-mirror.js';
import { APP_ROOT } from './read-node.js';

/**
 * How long after an action's reply its effect may still arrive, per app. GTK and Chromium run an
 * AT-SPI action before (or a frame after) they answer. Firefox answers first and hands the action
 * to the page's content process: measured on Firefox ESR under load (2 cores, six builds
 * running), a button's controlled paragraph changed 575 ms after DoAction's reply, and a
 * checkbox's `checked` and a field's text read back unchanged right after theirs.
 */
const DEFERRED_ACTION_MS = 2_000;

/** isDeferringApp: the app runs AT-SPI actions after answering them (Firefox, by its root's name). */
function isDeferringApp(mirror: AppMirror): boolean {
  return /firefox/i.test(mirror.nodes.get(APP_ROOT)?.name ?? '');
}

/**
 * keyGapMs is the pause between typed keys for this app: none for Chromium, the input layer's
 * default (undefined) for the others. Chromium reads keys from its own X connection in order
 * and hands them to the page one by one; the 6 ms pauses stretched to 7-20 ms each on a loaded
 * machine. A four-letter word typed by token into a field of the 6,350-node page (bench:observe's
 * type_web_field), paced and unpaced runs interleaved at load 8: p50 55.0 / 44.8 ms paced
 * against 28.7 / 27.4 ms unpaced, every run confirmed by read-back. Firefox garbled words sent
 * too fast (see input/type-text.ts), so it stays paced.
 */
export function keyGapMs(mirror: AppMirror): number | undefined {
  return /^chrom/i.test(mirror.nodes.get(APP_ROOT)?.name ?? '') ? 0 : undefined;
}

/** effectWindowMs is how long to wait for an action's effect in this app, at least `base`. */
export function effectWindowMs(mirror: AppMirror, base: number): number {
  return isDeferringApp(mirror) ? Math.max(base, DEFERRED_ACTION_MS) : base;
}

/**
 * nextEventOr waits until the mirror applies another event, or `ms` at most: a wait for an
 * effect wakes when the app announces something instead of on its next poll.
 */
export function nextEventOr(mirror: AppMirror, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    void mirror.nextEvent().then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * readUntil re-reads (fenced) until `isDone` holds or `ms` passes, and returns the last value
 * read; between reads it waits for the app's next event (25 ms at most). It returns at once
 * when the first read is done, so the bound only costs when the effect is late or missing.
 */
export async function readUntil<T>(
  mirror: AppMirror,
  read: () => Promise<T>,
  isDone: (value: T) => boolean,
  ms: number,
): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await read();
    if (isDone(value) || performance.now() >= deadline) return value;
    await nextEventOr(mirror, Math.min(25, deadline - performance.now()));
    await mirror.fence().catch(() => undefined);
  }
}
