import type { RecordingEstimate, RecordingQuality } from '@cubicle/contract/api';

/**
 * Measured per recorded desktop at 5 fps, 1280×800, Chromium scrolling a long coloured page
 * without pause (the busy end: an idle screen costs a fraction), FFmpeg 5.1 libx264 `veryfast`
 * `zerolatency`, one thread, 15 s per quality on this project's 2-core test machine (loaded).
 * `npm run bench:recording` measured 6.2 % and 3.2 MB/min at medium inside a sandbox; the pool's
 * settings show the (higher) figures below as the estimate.
 */
const AT_5_FPS: Record<RecordingQuality, RecordingEstimate> = {
  low: { cpu_pct_one_core: 7.9, mb_per_min: 3.8 },
  medium: { cpu_pct_one_core: 8.2, mb_per_min: 6.2 },
  high: { cpu_pct_one_core: 8.2, mb_per_min: 9.3 },
};

/**
 * estimateRecording scales the 5 fps measurement by frame rate: encoding and bytes grow about
 * linearly with frames (each frame of a scrolling page is mostly new pixels).
 */
export function estimateRecording(fps: number, quality: RecordingQuality): RecordingEstimate {
  const base = AT_5_FPS[quality];
  const scale = fps / 5;
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    cpu_pct_one_core: round(base.cpu_pct_one_core * scale),
    mb_per_min: round(base.mb_per_min * scale),
  };
}
