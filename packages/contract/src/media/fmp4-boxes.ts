/**
 * Reading ISO BMFF (fragmented MP4) boxes: the layout of the recording segments the guest writes
 * and the control plane stores, so both sides read it with this one reader. Pure functions over
 * bytes; nothing here writes.
 */

export interface Box {
  type: string;
  start: number;
  /** Offset of the box's payload (after size/type and a 64-bit size when present). */
  body: number;
  end: number;
}

/** boxes walks the boxes between `from` and `to` (one level); a box that overruns is an error. */
export function* boxes(buf: Uint8Array, from = 0, to = buf.length): Generator<Box> {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = from;
  while (at + 8 <= to) {
    let size = view.getUint32(at);
    let body = at + 8;
    if (size === 1) {
      size = Number(view.getBigUint64(at + 8));
      body = at + 16;
    } else if (size === 0) size = to - at;
    if (size < 8 || at + size > to) throw new Error(`malformed MP4 box at ${at}`);
    const type = String.fromCharCode(buf[at + 4]!, buf[at + 5]!, buf[at + 6]!, buf[at + 7]!);
    yield { type, start: at, body, end: at + size };
    at += size;
  }
}

/** findBox answers the first box along `path` (e.g. moof/traf/tfdt), searching every branch. */
export function findBox(
  buf: Uint8Array,
  path: readonly string[],
  from = 0,
  to = buf.length,
): Box | undefined {
  for (const box of boxes(buf, from, to)) {
    if (box.type !== path[0]) continue;
    if (path.length === 1) return box;
    const inner = findBox(buf, path.slice(1), box.body, box.end);
    if (inner) return inner;
  }
  return undefined;
}

/** childBox answers `parent`'s first direct child of `type`. */
export function childBox(buf: Uint8Array, parent: Box, type: string): Box | undefined {
  for (const b of boxes(buf, parent.body, parent.end)) if (b.type === type) return b;
  return undefined;
}

/** timescaleOf reads the video track's timescale (`moov/trak/mdia/mdhd`) from an init segment. */
export function timescaleOf(init: Uint8Array): number {
  const mdhd = findBox(init, ['moov', 'trak', 'mdia', 'mdhd']);
  if (!mdhd) throw new Error('init segment has no mdhd');
  const view = new DataView(init.buffer, init.byteOffset, init.byteLength);
  // version 1: creation/modification are 64-bit; the timescale follows them.
  return view.getUint32(mdhd.body + (init[mdhd.body] === 1 ? 20 : 12));
}
