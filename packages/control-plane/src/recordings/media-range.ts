/**
 * The media stream of a recording is its init segment followed by every media segment in seq
 * order; each is one sealed object, so a byte range maps to slices of a few objects. Pure, so
 * the arithmetic is tested apart from the store.
 */

export interface MediaPart {
  key: string;
  bytes: number;
}

export interface MediaSlice {
  key: string;
  /** Offsets within the part's plaintext, end exclusive. */
  from: number;
  to: number;
}

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * parseRange reads one `bytes=` range against a length: null for no header (the whole body),
 * inclusive `{start, end}` clamped to the length, or `unsatisfiable` (416) for a range that
 * starts past the end or an empty suffix.
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'unsatisfiable';
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/** slicesFor maps an inclusive byte range of the concatenated parts to per-part slices. */
export function slicesFor(parts: readonly MediaPart[], start: number, end: number): MediaSlice[] {
  const out: MediaSlice[] = [];
  let offset = 0;
  for (const part of parts) {
    const partEnd = offset + part.bytes; // exclusive
    if (partEnd > start && offset <= end) {
      out.push({
        key: part.key,
        from: Math.max(0, start - offset),
        to: Math.min(part.bytes, end + 1 - offset),
      });
    }
    if (offset > end) break;
    offset = partEnd;
  }
  return out;
}
