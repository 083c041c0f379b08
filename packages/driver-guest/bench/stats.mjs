// Shared helpers for benches: percentiles over a list of milliseconds.

/** percentile of already-collected samples (nearest rank), rounded to 0.1 ms. */
export function percentile(samples, p) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank] * 10) / 10;
}
