/** formatHours prints seconds as hours with one decimal (minutes below an hour). */
export function formatHours(seconds: number): string {
  if (seconds === 0) return '0 h';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** formatMs prints a duration in ms as ms or seconds. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
