import { AppError } from '@cubicle/contract/errors';
import type { Resources } from '../resources.js';
import { parseRange, slicesFor, type MediaPart } from './media-range.js';
import { KEPT_RECORDING } from './recording-kept.js';

/** RecordingMedia is one answer of the media endpoint: status, the range served, its bytes. */
export interface RecordingMedia {
  status: 200 | 206;
  /** The whole stream's length now (a live recording grows between reads). */
  size: number;
  start: number;
  end: number;
  body: AsyncIterable<Uint8Array>;
}

/**
 * openRecordingMedia serves a claim's video as one fragmented MP4: the init segment, then every
 * stored media segment in order, each opened (decrypted) from the tenant's sealed store only
 * when the requested range reaches it. Sizes come from the database, so a Range request costs
 * the objects it covers and nothing else. Tenant-scoped like getRecording (404 otherwise).
 */
export async function openRecordingMedia(
  deps: Pick<Resources, 'db' | 'objects'>,
  tenantId: string,
  claimId: string,
  range: string | undefined,
): Promise<RecordingMedia> {
  const row = await deps.db.recording.findFirst({
    where: { claimId, tenantId, ...KEPT_RECORDING },
    include: { segments: { orderBy: { seq: 'asc' }, select: { objectKey: true, bytes: true } } },
  });
  if (!row) throw new AppError('not_found', 'this claim has no recording');
  const parts: MediaPart[] =
    row.initKey && row.segments.length > 0
      ? [
          { key: row.initKey, bytes: row.initBytes },
          ...row.segments.map((s) => ({ key: s.objectKey, bytes: s.bytes })),
        ]
      : [];
  const size = parts.reduce((n, p) => n + p.bytes, 0);
  if (size === 0) throw new AppError('not_found', 'the recording has no stored segment yet');
  const asked = parseRange(range, size);
  if (asked === 'unsatisfiable')
    throw new AppError('range_not_satisfiable', `the media is ${size} bytes`, { size });
  const { start, end } = asked ?? { start: 0, end: size - 1 };
  const objects = deps.objects.forTenant(tenantId);
  const slices = slicesFor(parts, start, end);
  async function* body() {
    for (const slice of slices) {
      const plain = await objects.get(slice.key);
      yield plain.subarray(slice.from, slice.to);
    }
  }
  return { status: asked ? 206 : 200, size, start, end, body: body() };
}
