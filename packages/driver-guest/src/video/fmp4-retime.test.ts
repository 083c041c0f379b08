import { describe, expect, it } from 'vitest';
import { retimeSegment, sampleCount } from './fmp4-retime.js';

const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
};
const u64 = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(v));
  return b;
};
const box = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]);
};

interface Sample {
  duration?: number;
  size: number;
  flags?: number;
  cts?: number;
}

/**
 * segment builds what FFmpeg's HLS fMP4 muxer writes: styp, sidx (v1), moof (mfhd, traf: tfhd
 * with default-base-is-moof and a default size, tfdt v1, trun with `flags`), mdat.
 */
function segment(tfdt: number, trunFlags: number, samples: Sample[], defaultSize = 0) {
  const mdatBody = Buffer.concat(samples.map((s, i) => Buffer.alloc(s.size, i + 1)));
  const build = (dataOffset: number) => {
    const entries = samples.flatMap((s) => [
      ...(trunFlags & 0x100 ? [u32(s.duration ?? 0)] : []),
      ...(trunFlags & 0x200 ? [u32(s.size)] : []),
      ...(trunFlags & 0x400 ? [u32(s.flags ?? 0)] : []),
      ...(trunFlags & 0x800 ? [u32(s.cts ?? 0)] : []),
    ]);
    const trun = box(
      'trun',
      u32(trunFlags),
      u32(samples.length),
      u32(dataOffset),
      ...(trunFlags & 0x4 ? [u32(0x0200_0000)] : []),
      ...entries,
    );
    const tfhd = box('tfhd', u32(0x020018), u32(1), u32(3200), u32(defaultSize));
    return box(
      'moof',
      box('mfhd', u32(0), u32(7)),
      box('traf', tfhd, box('tfdt', u32(0x0100_0000), u64(tfdt)), trun),
    );
  };
  const moofSize = build(0).length;
  const moof = build(moofSize + 8);
  const mdat = box('mdat', mdatBody);
  const sidx = box(
    'sidx',
    u32(0x0100_0000),
    u32(1),
    u32(16000),
    u64(tfdt),
    u64(0),
    Buffer.from([0, 0, 0, 1]),
    u32(moof.length + mdat.length),
    u32(9999),
    u32(0x9000_0000),
  );
  return { bytes: Buffer.concat([box('styp', Buffer.from('msdh')), sidx, moof, mdat]), mdatBody };
}

/** read walks the retimed segment back: tfdt, trun flags, per-sample durations, sidx figures. */
function read(buf: Buffer) {
  let at = 0;
  const out: Record<string, unknown> = {};
  const walk = (from: number, to: number) => {
    at = from;
    while (at < to) {
      const size = buf.readUInt32BE(at);
      const type = buf.toString('latin1', at + 4, at + 8);
      const body = at + 8;
      if (type === 'moof' || type === 'traf') {
        const next = at + size;
        if (type === 'moof') {
          out.moofStart = at;
          out.moofSize = size;
        }
        walk(body, next);
        at = next;
        continue;
      }
      if (type === 'sidx') {
        out.sidxEpt = Number(buf.readBigUInt64BE(body + 12));
        out.sidxSize = buf.readUInt32BE(body + 32) & 0x7fff_ffff;
        out.sidxDuration = buf.readUInt32BE(body + 36);
      }
      if (type === 'mdat') {
        out.mdatStart = at;
        out.mdatSize = size;
        out.mdatBody = buf.subarray(body, at + size);
      }
      if (type === 'tfdt') out.tfdt = Number(buf.readBigUInt64BE(body + 4));
      if (type === 'trun') {
        const flags = buf.readUInt32BE(body) & 0xff_ffff;
        const count = buf.readUInt32BE(body + 4);
        out.trunFlags = flags;
        out.dataOffset = buf.readInt32BE(body + 8);
        let p = body + 12 + (flags & 0x4 ? 4 : 0);
        const durations: number[] = [];
        for (let i = 0; i < count; i++) {
          durations.push(buf.readUInt32BE(p));
          p += 4 + (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0) + (flags & 0x800 ? 4 : 0);
        }
        out.durations = durations;
      }
      at += size;
    }
  };
  walk(0, buf.length);
  return out;
}

describe('putting a segment’s frames at their capture times', () => {
  it('rewrites tfdt, per-sample durations and sidx, drops composition offsets, keeps the data', () => {
    // What FFmpeg wrote after a stall: the first frame one interval after the last segment, the
    // rest one tick apart with composition offsets of seconds.
    const raw = segment(57600, 0xf01, [
      { duration: 1, size: 300, flags: 0x0200_0000, cts: 0 },
      { duration: 1, size: 40, flags: 0x0101_0000, cts: 63_000 },
      { duration: 3200, size: 41, flags: 0x0101_0000, cts: 63_000 },
    ]);
    expect(sampleCount(raw.bytes)).toBe(3);
    const out = Buffer.from(retimeSegment(raw.bytes, [121_472, 124_672, 127_900], 3200));
    const r = read(out);
    expect(r.tfdt).toBe(121_472);
    expect(r.durations).toEqual([3200, 3228, 3200]);
    expect((r.trunFlags as number) & 0x800).toBe(0);
    expect(r.trunFlags).toBe(0x701);
    // The sample data is where trun says it is (moof-relative), and untouched.
    expect((r.moofStart as number) + (r.dataOffset as number)).toBe((r.mdatStart as number) + 8);
    expect(Buffer.compare(r.mdatBody as Buffer, raw.mdatBody)).toBe(0);
    expect(r.sidxEpt).toBe(121_472);
    expect(r.sidxSize).toBe((r.moofSize as number) + (r.mdatSize as number));
    expect(r.sidxDuration).toBe(127_900 - 121_472 + 3200);
    expect(out.length).toBe(raw.bytes.length - 3 * 4);
  });

  it("adds durations to a trun that had none (tfhd's default), keeping tfhd's default size", () => {
    const raw = segment(16_000, 0x205, [{ size: 500 }, { size: 60 }]);
    const out = Buffer.from(retimeSegment(raw.bytes, [16_000, 22_400], 3200));
    const r = read(out);
    expect(r.trunFlags).toBe(0x305);
    expect(r.durations).toEqual([6400, 3200]);
    expect((r.moofStart as number) + (r.dataOffset as number)).toBe((r.mdatStart as number) + 8);
    expect(out.length).toBe(raw.bytes.length + 2 * 4);

    const single = segment(3200, 0x5, [{ size: 700 }], 700);
    const one = read(Buffer.from(retimeSegment(single.bytes, [121_472], 3200)));
    expect(one.trunFlags).toBe(0x105);
    expect(one.tfdt).toBe(121_472);
    expect(one.durations).toEqual([3200]);
  });

  it('refuses times that do not match the samples or do not rise', () => {
    const raw = segment(0, 0x205, [{ size: 5 }, { size: 6 }]);
    expect(() => retimeSegment(raw.bytes, [0], 3200)).toThrow(/2 samples, 1 times/);
    expect(() => retimeSegment(raw.bytes, [100, 100], 3200)).toThrow(/rise/);
  });
});
