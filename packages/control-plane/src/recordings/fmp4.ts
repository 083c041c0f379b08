/**
 * Just enough of ISO BMFF (fragmented MP4) to put a segment on the recording's time axis: read
 * the track timescale from an init segment, and shift a media segment's decode times (`tfdt` in
 * each `traf`, and `sidx`'s earliest presentation time) by a constant. Sizes never change, so a
 * segment keeps its byte length. Pure functions over bytes; nothing else of the file is touched.
 */

import { boxes, findBox as find, timescaleOf } from '@cubicle/contract/media';

// The box reader and the timescale are shared with the guest, which writes these segments.
export { timescaleOf };

/** firstDecodeTime reads the first `tfdt` of a media segment. */
export function firstDecodeTime(segment: Uint8Array): number {
  const tfdt = find(segment, ['moof', 'traf', 'tfdt']);
  if (!tfdt) throw new Error('media segment has no tfdt');
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  return segment[tfdt.body] === 1
    ? Number(view.getBigUint64(tfdt.body + 4))
    : view.getUint32(tfdt.body + 4);
}

/**
 * shiftDecodeTimes returns a copy of a media segment whose every `tfdt` (and `sidx` earliest
 * presentation time) is moved by `delta` timescale units. A 32-bit field that would overflow
 * or go negative is an error: callers keep times within a recording's length.
 */
export function shiftDecodeTimes(segment: Uint8Array, delta: number): Uint8Array {
  const out = new Uint8Array(segment);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const shift = (at: number, wide: boolean) => {
    const old = wide ? Number(view.getBigUint64(at)) : view.getUint32(at);
    const next = old + delta;
    if (next < 0 || (!wide && next > 0xffff_ffff))
      throw new Error(`decode time ${next} does not fit its field`);
    if (wide) view.setBigUint64(at, BigInt(next));
    else view.setUint32(at, next);
  };
  for (const top of boxes(out, 0, out.length)) {
    if (top.type === 'sidx') {
      // version, flags, reference_ID, timescale, then earliest_presentation_time.
      shift(top.body + 12, out[top.body] === 1);
    }
    if (top.type !== 'moof') continue;
    for (const traf of boxes(out, top.body, top.end)) {
      if (traf.type !== 'traf') continue;
      for (const inner of boxes(out, traf.body, traf.end))
        if (inner.type === 'tfdt') shift(inner.body + 4, out[inner.body] === 1);
    }
  }
  return out;
}

/**
 * durationUnitsOf sums a media segment's sample durations (every `trun`, with `tfhd`'s default
 * where a run gives none), in timescale units: the segment's true length, which the encoder's
 * playlist only approximates for frames of uneven spacing.
 */
export function durationUnitsOf(segment: Uint8Array, fallbackDuration = 0): number {
  return sampleSpans(segment, fallbackDuration).reduce((n, s) => n + s.duration, 0);
}

/** One frame of a media segment: its decode time and how long it stays on screen (units). */
export interface SampleSpan {
  start: number;
  duration: number;
}

/**
 * sampleSpans lists a media segment's frames in order: each traf's samples start at its `tfdt`
 * and follow one another by their durations (the trun's, or `tfhd`'s default). A frame that lasts
 * long is a span in which the encoder captured nothing new (recording-gaps.ts).
 */
export function sampleSpans(segment: Uint8Array, fallbackDuration = 0): SampleSpan[] {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const out: SampleSpan[] = [];
  for (const top of boxes(segment, 0, segment.length)) {
    if (top.type !== 'moof') continue;
    for (const traf of boxes(segment, top.body, top.end)) {
      if (traf.type !== 'traf') continue;
      let defaultDuration = fallbackDuration;
      let time: number | null = null;
      for (const inner of boxes(segment, traf.body, traf.end)) {
        const flags = view.getUint32(inner.body) & 0xff_ffff;
        if (inner.type === 'tfhd') {
          let at = inner.body + 8;
          if (flags & 0x01) at += 8;
          if (flags & 0x02) at += 4;
          if (flags & 0x08) defaultDuration = view.getUint32(at);
        }
        if (inner.type === 'tfdt')
          time =
            segment[inner.body] === 1
              ? Number(view.getBigUint64(inner.body + 4))
              : view.getUint32(inner.body + 4);
        if (inner.type !== 'trun') continue;
        // A traf without tfdt follows the previous one (FFmpeg always writes it).
        let t = time ?? (out.length > 0 ? out.at(-1)!.start + out.at(-1)!.duration : 0);
        const count = view.getUint32(inner.body + 4);
        let at = inner.body + 8;
        if (flags & 0x001) at += 4;
        if (flags & 0x004) at += 4;
        const perSample =
          (flags & 0x100 ? 4 : 0) +
          (flags & 0x200 ? 4 : 0) +
          (flags & 0x400 ? 4 : 0) +
          (flags & 0x800 ? 4 : 0);
        for (let i = 0; i < count; i++, at += perSample) {
          const duration = flags & 0x100 ? view.getUint32(at) : defaultDuration;
          out.push({ start: t, duration });
          t += duration;
        }
        time = t;
      }
    }
  }
  return out;
}
