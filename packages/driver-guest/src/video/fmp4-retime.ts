/**
 * Putting each frame of an encoder segment (fragmented MP4: styp, sidx, moof, mdat) back at the
 * time it was captured. FFmpeg 5.1's HLS fMP4 muxer stores sample durations, and at a segment
 * cut it gives the last sample the default duration (1/fps) and starts the next segment there:
 * after a hole in the frames (a starved or stopped encoder) the next segment starts as early as
 * the hole was long, and a burst of frames after a stall gets composition offsets of seconds
 * (measured: a 5-s SIGSTOP left frames shown 4.8 s after their capture). The guest knows every
 * frame's capture time (FFmpeg's framecrc beside the segments), so it rewrites the segment's `tfdt`, per-sample
 * durations and composition offsets (0: no B-frames) from those times. Pure functions over bytes.
 */

// The box reader is shared with the control plane, which stores these segments.
import { boxes, childBox as child } from '@cubicle/contract/media';

/** sampleCount is how many frames a media segment holds (one moof/traf/trun each, as FFmpeg writes). */
export function sampleCount(segment: Uint8Array): number {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  let count = 0;
  for (const top of boxes(segment, 0, segment.length)) {
    if (top.type !== 'moof') continue;
    for (const traf of boxes(segment, top.body, top.end)) {
      if (traf.type !== 'traf') continue;
      for (const trun of boxes(segment, traf.body, traf.end))
        if (trun.type === 'trun') count += view.getUint32(trun.body + 4);
    }
  }
  return count;
}

const TRUN_DATA_OFFSET = 0x1;
const TRUN_FIRST_FLAGS = 0x4;
const TRUN_DURATION = 0x100;
const TRUN_SIZE = 0x200;
const TRUN_FLAGS = 0x400;
const TRUN_CTS = 0x800;

/**
 * retimeSegment answers a copy of a one-fragment media segment whose samples sit at `times`
 * (timescale units on the run's axis, one per sample, rising) and whose last sample lasts
 * `lastDuration`: tfdt = times[0], each duration = the next time minus this one, no composition
 * offsets; sizes of moof/traf/trun/sidx and trun's data offset follow the rewritten trun.
 */
export function retimeSegment(
  segment: Uint8Array,
  times: readonly number[],
  lastDuration: number,
): Uint8Array {
  const view = new DataView(segment.buffer, segment.byteOffset, segment.byteLength);
  const top = [...boxes(segment, 0, segment.length)];
  const moofs = top.filter((b) => b.type === 'moof');
  if (moofs.length !== 1) throw new Error(`expected one moof, found ${moofs.length}`);
  const moof = moofs[0]!;
  const traf = child(segment, moof, 'traf');
  const tfdt = traf && child(segment, traf, 'tfdt');
  const trun = traf && child(segment, traf, 'trun');
  if (!traf || !tfdt || !trun) throw new Error('moof without traf/tfdt/trun');
  const flags = view.getUint32(trun.body) & 0xff_ffff;
  const count = view.getUint32(trun.body + 4);
  if (count !== times.length) throw new Error(`${count} samples, ${times.length} times`);
  if (!(flags & TRUN_DATA_OFFSET)) throw new Error('trun without data offset');
  for (let i = 1; i < times.length; i++)
    if (!(times[i]! > times[i - 1]!)) throw new Error('capture times must rise');

  // Read the samples' sizes and flags as they are.
  let at = trun.body + 8;
  const dataOffset = view.getInt32(at);
  at += 4;
  const firstFlags = flags & TRUN_FIRST_FLAGS ? view.getUint32(at) : null;
  if (flags & TRUN_FIRST_FLAGS) at += 4;
  const sizes: number[] = [];
  const sampleFlags: number[] = [];
  for (let i = 0; i < count; i++) {
    if (flags & TRUN_DURATION) at += 4;
    if (flags & TRUN_SIZE) sizes.push(view.getUint32((at += 4) - 4));
    if (flags & TRUN_FLAGS) sampleFlags.push(view.getUint32((at += 4) - 4));
    if (flags & TRUN_CTS) at += 4;
  }

  const newFlags = (flags | TRUN_DURATION) & ~TRUN_CTS;
  // Sizes and flags stay as they were given (per sample, or tfhd's defaults).
  const perSample = 4 + (newFlags & TRUN_SIZE ? 4 : 0) + (newFlags & TRUN_FLAGS ? 4 : 0);
  const trunSize = 8 + 4 + 4 + 4 + (firstFlags === null ? 0 : 4) + count * perSample;
  const delta = trunSize - (trun.end - trun.start);
  const trunBytes = new Uint8Array(trunSize);
  const t = new DataView(trunBytes.buffer);
  t.setUint32(0, trunSize);
  trunBytes.set([0x74, 0x72, 0x75, 0x6e], 4); // 'trun'
  t.setUint32(8, (segment[trun.body]! << 24) | newFlags);
  t.setUint32(12, count);
  t.setInt32(16, dataOffset + delta);
  let w = 20;
  if (firstFlags !== null) t.setUint32((w += 4) - 4, firstFlags);
  for (let i = 0; i < count; i++) {
    const duration = i + 1 < count ? times[i + 1]! - times[i]! : lastDuration;
    t.setUint32((w += 4) - 4, duration);
    if (newFlags & TRUN_SIZE) t.setUint32((w += 4) - 4, sizes[i]!);
    if (newFlags & TRUN_FLAGS) t.setUint32((w += 4) - 4, sampleFlags[i]!);
  }

  const out = new Uint8Array(segment.length + delta);
  out.set(segment.subarray(0, trun.start), 0);
  out.set(trunBytes, trun.start);
  out.set(segment.subarray(trun.end), trun.start + trunSize);
  const o = new DataView(out.buffer);
  // Boxes that contain the trun grow with it (32-bit sizes: FFmpeg's moof never needs 64).
  o.setUint32(moof.start, moof.end - moof.start + delta);
  o.setUint32(traf.start, traf.end - traf.start + delta);
  const first = times[0]!;
  if (segment[tfdt.body] === 1) o.setBigUint64(tfdt.body + 4, BigInt(first));
  else o.setUint32(tfdt.body + 4, first);
  const total = times.at(-1)! - first + lastDuration;
  const sidx = top.find((b) => b.type === 'sidx');
  if (sidx && sidx.start < moof.start) {
    const wide = segment[sidx.body] === 1;
    const ept = sidx.body + 12;
    if (wide) o.setBigUint64(ept, BigInt(first));
    else o.setUint32(ept, first);
    const refs = ept + (wide ? 16 : 8) + 2;
    if (view.getUint16(refs) === 1) {
      const size = view.getUint32(refs + 2);
      o.setUint32(refs + 2, (size & 0x8000_0000) | ((size & 0x7fff_ffff) + delta));
      o.setUint32(refs + 6, total);
    }
  }
  return out;
}
