import { describe, expect, it } from 'vitest';
import { followsOf, segmentGaps } from './recording-gaps.js';

// Timescale 1000 (ms), 5 fps: a frame lasts 200 ms.
const spans = (...pairs: [number, number][]) =>
  pairs.map(([start, duration]) => ({ start, duration }));
const base = { unitsPerMs: 1, fps: 5, storedEndMs: 10_000, follows: 'next' as const };

describe('recording gaps', () => {
  it('finds none in evenly spaced frames that follow the stored video', () => {
    expect(
      segmentGaps({ ...base, spans: spans([10_000, 200], [10_200, 200], [10_400, 900]) }),
    ).toEqual([]);
  });

  it('makes a frame held for seconds a gap from one interval after it to the next frame', () => {
    // The encoder was stopped from ~10.2 s to 14.4 s: the guest gave the frame before it the
    // whole span (fmp4-retime.ts).
    expect(
      segmentGaps({ ...base, spans: spans([10_000, 200], [10_200, 4200], [14_400, 200]) }),
    ).toEqual([{ start_ms: 10_400, end_ms: 14_400, reason: 'no_frames' }]);
  });

  it('makes the span between the stored video and a later segment a gap, by how it follows', () => {
    const later = { ...base, spans: spans([13_000, 200], [13_200, 200]) };
    expect(segmentGaps({ ...later, follows: 'new_run' })).toEqual([
      { start_ms: 10_000, end_ms: 13_000, reason: 'encoder_restarted' },
    ]);
    expect(segmentGaps({ ...later, follows: 'skipped' })[0]!.reason).toBe('segment_lost');
    expect(segmentGaps({ ...later, follows: 'next' })[0]!.reason).toBe('no_frames');
    // The recording's first segment has nothing before it.
    expect(segmentGaps({ ...later, storedEndMs: null })).toEqual([]);
  });

  it('needs two intervals at a low fps', () => {
    // 1 fps: a frame lasts 1 s, so 1.5 s without a new one is no gap; 2.5 s is.
    const slow = { ...base, fps: 1 };
    expect(segmentGaps({ ...slow, spans: spans([10_000, 1500]) })).toEqual([]);
    expect(segmentGaps({ ...slow, spans: spans([10_000, 2500]) })).toEqual([
      { start_ms: 11_000, end_ms: 12_500, reason: 'no_frames' },
    ]);
  });

  it('reads how a guest segment follows the one stored before', () => {
    expect(followsOf('r0-4', 'r0-5')).toBe('next');
    expect(followsOf('r0-4', 'r0-6')).toBe('skipped');
    expect(followsOf('r0-4', 'r1-0')).toBe('new_run');
    expect(followsOf(null, 'r0-0')).toBe('next');
  });
});
