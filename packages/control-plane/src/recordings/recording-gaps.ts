import type { RecordingGap } from '@cubicle/contract/api';
import type { SampleSpan } from './fmp4.js';

/**
 * A frame that stays on screen longer than this (ms), or two frame intervals at a low fps, leaves
 * a gap: at 5 fps a frame lasts 200 ms, so a second without a new one is 4 missing frames.
 */
export const GAP_MIN_MS = 1000;

export interface SegmentGapsInput {
  /** The segment's frames, already on the recording's axis (timescale units). */
  spans: readonly SampleSpan[];
  unitsPerMs: number;
  fps: number;
  /** Where the video stored before it ends (ms), or null for the recording's first segment. */
  storedEndMs: number | null;
  /** How it follows the segment stored before: the next of the same run, a later one, a new run. */
  follows: 'next' | 'skipped' | 'new_run';
}

/**
 * segmentGaps finds the spans without frames a segment brings: a frame lasting long (the encoder
 * captured nothing new: starved, stopped, or the desktop paused; the guest gives such a frame the
 * time until the next one, fmp4-retime.ts), and the span between the video stored before and
 * this segment's first frame (an encoder restart, a lost segment). A gap begins one frame interval
 * after the last frame (that frame's own time on screen) and ends at the next frame, in ms.
 */
export function segmentGaps(input: SegmentGapsInput): RecordingGap[] {
  const interval = 1000 / input.fps;
  const min = Math.max(GAP_MIN_MS, 2 * interval);
  const ms = (units: number) => Math.round(units / input.unitsPerMs);
  const out: RecordingGap[] = [];
  const first = input.spans[0];
  if (first && input.storedEndMs !== null && ms(first.start) - input.storedEndMs > min - interval)
    out.push({
      start_ms: input.storedEndMs,
      end_ms: ms(first.start),
      reason:
        input.follows === 'new_run'
          ? 'encoder_restarted'
          : input.follows === 'skipped'
            ? 'segment_lost'
            : 'no_frames',
    });
  for (const span of input.spans) {
    if (ms(span.duration) <= min) continue;
    out.push({
      start_ms: Math.round(ms(span.start) + interval),
      end_ms: ms(span.start + span.duration),
      reason: 'no_frames',
    });
  }
  return out;
}

/**
 * followsOf says how a guest segment id (`r<run>-<index>`) follows the one stored before it.
 */
export function followsOf(previous: string | null, next: string): SegmentGapsInput['follows'] {
  const parse = (id: string) => /^r(\d+)-(\d+)$/.exec(id)?.slice(1).map(Number);
  const a = previous === null ? undefined : parse(previous);
  const b = parse(next);
  if (!a || !b) return 'next';
  if (a[0] !== b[0]) return 'new_run';
  return b[1] === a[1]! + 1 ? 'next' : 'skipped';
}

/** allGaps joins the gaps of a recording's segments (in seq order) into the recording's list. */
export function allGaps(segments: readonly { gaps: unknown }[]): RecordingGap[] {
  return segments.flatMap((s) => (Array.isArray(s.gaps) ? (s.gaps as RecordingGap[]) : []));
}
