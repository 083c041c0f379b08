import { describe, expect, it } from 'vitest';
import {
  durationUnitsOf,
  firstDecodeTime,
  sampleSpans,
  shiftDecodeTimes,
  timescaleOf,
} from './fmp4.js';

const box = (type: string, ...payload: Uint8Array[]) => {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

// An init with an mdhd (version 0: flags, creation, modification, timescale, duration).
const init = box(
  'moov',
  box('trak', box('mdia', box('mdhd', u32(0), u32(0), u32(0), u32(10240), u32(0)))),
);
// A media segment as FFmpeg's HLS fMP4 writes it: styp, sidx (v1), moof/traf/tfdt (v1), mdat.
const segment = (tfdt: number) =>
  Buffer.concat([
    box('styp', Buffer.from('msdh')),
    box('sidx', Buffer.from([1, 0, 0, 0]), u32(1), u32(10240), u64(tfdt), u64(0), u32(0)),
    box(
      'moof',
      box('mfhd', u32(0), u32(1)),
      box('traf', box('tfdt', Buffer.from([1, 0, 0, 0]), u64(tfdt))),
    ),
    box('mdat', Buffer.from('frames')),
  ]);

describe('fragmented MP4 timing', () => {
  it('reads the track timescale from the init segment', () => {
    expect(timescaleOf(init)).toBe(10240);
  });

  it('moves tfdt and sidx by a constant and keeps the bytes around them', () => {
    const before = segment(20480);
    const after = shiftDecodeTimes(before, 85688 - 20480);
    expect(firstDecodeTime(before)).toBe(20480);
    expect(firstDecodeTime(after)).toBe(85688);
    expect(after.length).toBe(before.length);
    const sidx = Buffer.from(after).indexOf('sidx');
    expect(Buffer.from(after).readBigUInt64BE(sidx + 4 + 12)).toBe(85688n);
    expect(Buffer.from(after).subarray(-6).toString()).toBe('frames');
    // The input is left as it was.
    expect(firstDecodeTime(before)).toBe(20480);
  });

  it('refuses a time before zero', () => {
    expect(() => shiftDecodeTimes(segment(10), -11)).toThrow(/does not fit/);
  });

  it('sums per-sample durations, or the tfhd default where a run gives none', () => {
    // trun flags 0x100: one duration per sample (3 samples: 2048 + 3072 + 2048).
    const perSample = box(
      'moof',
      box(
        'traf',
        box('tfhd', u32(0), u32(1)),
        box('trun', u32(0x100), u32(3), u32(2048), u32(3072), u32(2048)),
      ),
    );
    expect(durationUnitsOf(perSample)).toBe(7168);
    // tfhd flags 0x08 (default duration 2048), trun without durations (4 samples).
    const byDefault = box(
      'moof',
      box('traf', box('tfhd', u32(0x08), u32(1), u32(2048)), box('trun', u32(0), u32(4))),
    );
    expect(durationUnitsOf(byDefault)).toBe(8192);
  });

  it('lists each frame from the tfdt on, by its duration', () => {
    const withHole = box(
      'moof',
      box(
        'traf',
        box('tfhd', u32(0), u32(1)),
        box('tfdt', Buffer.from([1, 0, 0, 0]), u64(5000)),
        box('trun', u32(0x100), u32(3), u32(200), u32(4000), u32(200)),
      ),
    );
    expect(sampleSpans(withHole)).toEqual([
      { start: 5000, duration: 200 },
      { start: 5200, duration: 4000 },
      { start: 9200, duration: 200 },
    ]);
  });
});
