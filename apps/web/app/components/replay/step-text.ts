import type { RecordingGap, TimelineEntry } from '@cubicle/contract/api';

/** clock prints a media time (seconds) as m:ss.t, the way the step list and the player agree. */
export function clock(seconds: number): string {
  const s = Math.max(0, seconds);
  const m = Math.floor(s / 60);
  const rest = (s - m * 60).toFixed(1).padStart(4, '0');
  return `${m}:${rest}`;
}

/**
 * videoSecondsOf places an entry in the video: the video's time axis is the claim's wall clock
 * from the recording's first frame (`started_at`), so an entry at T is at T − started_at.
 */
export function videoSecondsOf(entry: Pick<TimelineEntry, 'at'>, startedAt: string): number {
  return Math.max(0, (Date.parse(entry.at) - Date.parse(startedAt)) / 1000);
}

/** stepTitle is the one line a step shows in the list. */
export function stepTitle(e: TimelineEntry): string {
  switch (e.kind) {
    case 'action': {
      const target = e.element
        ? ` ${e.element.role ?? ''} ${e.element.name ? `“${e.element.name}”` : ''}`.trimEnd()
        : '';
      return `${e.action ?? e.operation}${target}`;
    }
    case 'window':
      return e.event === 'launched'
        ? `window launched${e.app ? `: ${e.app}` : ''}`
        : 'window launch failed';
    case 'run_started':
      return `run started: ${e.argv.join(' ').slice(0, 80)}`;
    case 'run_output':
      return `${e.stream}: ${e.text.trim().slice(0, 80)}`;
    case 'run_ended':
      return `run ${e.status}${e.exit_code === null ? '' : ` (exit ${e.exit_code})`}`;
    case 'viewer':
      return `viewer ${e.event} (${e.mode})${e.close_reason ? `: ${e.close_reason}` : ''}`;
    case 'handoff':
      return `handoff ${e.event}${e.event === 'requested' ? `: ${e.reason.slice(0, 60)}` : e.state ? ` (${e.state})` : ''}`;
    case 'egress_denied':
      return `egress denied: ${e.name || e.ip}${e.port >= 0 ? `:${e.port}` : ''} ×${e.count}`;
    case 'claim':
      return `claim ${e.event}${e.reason ? ` (${e.reason})` : ''}`;
    default:
      return (e satisfies never as { kind: string }).kind;
  }
}

/** currentIndex is the last entry at or before media time `t` (entries sorted by `seconds`). */
export function currentIndex(seconds: readonly number[], t: number): number {
  let lo = 0;
  let hi = seconds.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (seconds[mid]! <= t + 0.05) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** gapAt is the span without frames the video is in at `seconds`, if any. */
export function gapAt(gaps: readonly RecordingGap[], seconds: number): RecordingGap | null {
  const ms = seconds * 1000;
  return gaps.find((g) => ms >= g.start_ms && ms < g.end_ms) ?? null;
}

/** gapText says why a span has no frames, in a few words. */
export function gapText(gap: RecordingGap): string {
  const why =
    gap.reason === 'no_frames'
      ? 'the encoder captured nothing'
      : gap.reason === 'encoder_restarted'
        ? 'the encoder restarted'
        : 'a segment is missing';
  return `${clock(gap.start_ms / 1000)}–${clock(gap.end_ms / 1000)}, ${why}`;
}
