// The Server-Timing header every drive answer carries (API enqueue and wait, lane, the worker's
// queued/target/guest/check/store): read per answer, summarised per part by the drive benches.
import { percentile, round } from './stack.mjs';

/** parseServerTiming reads `name;dur=1.2, …` into { name: 1.2, … } ({} without the header). */
export function parseServerTiming(value) {
  return Object.fromEntries(
    String(value ?? '')
      .split(',')
      .map((part) => /^\s*([\w-]+);dur=([\d.]+)/.exec(part))
      .filter(Boolean)
      .map((m) => [m[1], Number(m[2])]),
  );
}

/** hopsP50 is each part's p50 over the answers that carried it. */
export function hopsP50(hops) {
  const names = [...new Set(hops.flatMap((h) => Object.keys(h)))];
  return Object.fromEntries(
    names.map((n) => [
      n,
      round(
        percentile(
          hops.map((h) => h[n]).filter((x) => x !== undefined),
          50,
        ),
      ),
    ]),
  );
}
