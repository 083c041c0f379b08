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
 * readUntil reads until `isDone` holds or `ms` passes, and returns the last value read. Each
 * read goes out together with a fence: the app answers in order, so when the value arrives the
 * mirror holds every event sent before it, for the cost of the read alone (a fence and then the
 * read were two round trips to an app that is busy handling the input: 1-25 ms each on
 * Chromium at load ~20, measured). Between reads it waits for the app's next event (25 ms at
 * most); an event that arrived while a read was out wakes no later wait, so the next read
 * goes out at once (Chromium's insert of a typed word often landed right after the read that
 * missed it, and the wait then ran its whole 25 ms: measured, type_text on the 6,350-node page).
 * It returns at once when the first read is done, so the bound only costs when the effect is
 * late or missing.
 */
export async function readUntil<T>(
  mirror: AppMirror,
  read: () => Promise<T>,
  isDone: (value: T) => boolean,
  ms: number,
): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const seen = mirror.lastSeq;
    const [, value] = await Promise.all([mirror.fence().catch(() => undefined), read()]);
    if (isDone(value) || performance.now() >= deadline) return value;
    if (mirror.lastSeq === seen)
      await nextEventOr(mirror, Math.min(25, deadline - performance.now()));
  }
}
