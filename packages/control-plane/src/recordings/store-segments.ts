import type { VideoSegment, VideoStatus } from '@cubicle/contract/guest';
import type { Db, Recording } from '@cubicle/db';
import type { TenantObjects } from '@cubicle/object-store';
import type { SandboxGuestClient } from '../guest/guest-client.js';
import {
  durationUnitsOf,
  firstDecodeTime,
  sampleSpans,
  shiftDecodeTimes,
  timescaleOf,
} from './fmp4.js';
import { followsOf, segmentGaps } from './recording-gaps.js';

/** Every guest call of the puller is short: the guest answers from its disk. */
export const VIDEO_CALL_TIMEOUT_MS = 15_000;

/** recordingPrefix is where a recording's objects live in the tenant's store. */
export const recordingPrefix = (claimId: string) => `recordings/${claimId}/`;
// The guest's id is in the key: two storers racing for one seq (a puller's pass still running when
// the release flush starts) never overwrite each other's object; the loser's is an orphan under
// the prefix, which the retention sweep deletes with the rest.
const segmentKey = (claimId: string, seq: number, guestId: string) =>
  `${recordingPrefix(claimId)}seg-${String(seq).padStart(8, '0')}-${guestId}.m4s`;
const initKey = (claimId: string) => `${recordingPrefix(claimId)}init.mp4`;

/**
 * storeSegments stores the finished segments a guest listed, oldest first, and acknowledges
 * them so the guest deletes its copies. For each: its bytes are fetched, its decode times moved
 * onto the recording's axis (media time 0 = the first frame's wall-clock time; a run's offset is
 * its first frame's wall-clock time, so a restarted encoder's gap stays a gap), the object is
 * written, then its row and the recording's totals in one statement guarded by the expected
 * seq. A segment already stored (the worker died before acknowledging) is only acknowledged.
 * Returns how many were stored.
 */
export async function storeSegments(
  db: Db,
  objects: TenantObjects,
  guest: SandboxGuestClient,
  claimId: string,
  status: VideoStatus,
): Promise<number> {
  const segments = [...status.segments].sort((a, b) => a.run - b.run || a.index - b.index);
  if (segments.length === 0) return 0;
  const known = new Set(
    (
      await db.recordingSegment.findMany({
        where: { claimId, guestId: { in: segments.map((s) => s.id) } },
        select: { guestId: true },
      })
    ).map((r) => r.guestId),
  );
  const acked: string[] = [];
  let stored = 0;
  let timescale: number | undefined;
  for (const segment of segments) {
    if (known.has(segment.id)) {
      acked.push(segment.id);
      continue;
    }
    const recording = await db.recording.findUniqueOrThrow({ where: { claimId } });
    if (recording.state !== 'recording') break;
    timescale ??= await ensureInit(db, objects, guest, recording, segment);
    try {
      await storeOne(db, objects, guest, recording, segment, timescale);
      stored++;
    } catch (err) {
      // Another storer (the puller's pass that listed it before the release flush took over)
      // stored this one meanwhile: it is stored, so go on with the next. Giving up here lost
      // every later segment, and the video ended tens of seconds before the recording did.
      const mine = await db.recordingSegment.findUnique({
        where: { claimId_guestId: { claimId, guestId: segment.id } },
        select: { seq: true },
      });
      if (!mine) throw err;
    }
    acked.push(segment.id);
  }
  // Inits of runs whose segments are all acknowledged go with them (the guest decides).
  if (acked.length > 0)
    await guest.call('video.ack', { ids: acked }, { timeoutMs: VIDEO_CALL_TIMEOUT_MS });
  return stored;
}

async function fetchSegment(guest: SandboxGuestClient, id: string): Promise<Uint8Array> {
  const data = await guest.call('video.segment', { id }, { timeoutMs: VIDEO_CALL_TIMEOUT_MS });
  return Buffer.from(data.data_base64, 'base64');
}

/**
 * ensureInit stores the recording's init segment (codec setup) from the first run it sees and
 * answers the track's timescale. Later runs encode with the same settings, whose init is the
 * same bytes (measured: FFmpeg 5.1 + libx264, identical options), so one init serves all.
 */
async function ensureInit(
  db: Db,
  objects: TenantObjects,
  guest: SandboxGuestClient,
  recording: Recording,
  segment: VideoSegment,
): Promise<number> {
  if (recording.initKey) return timescaleOf(await objects.get(recording.initKey));
  const init = await fetchSegment(guest, segment.init_id);
  const key = initKey(recording.claimId);
  await objects.put(key, init);
  await db.recording.update({
    where: { claimId: recording.claimId },
    data: { initKey: key, initBytes: init.length },
  });
  return timescaleOf(init);
}

async function storeOne(
  db: Db,
  objects: TenantObjects,
  guest: SandboxGuestClient,
  recording: Recording,
  segment: VideoSegment,
  timescale: number,
) {
  const raw = await fetchSegment(guest, segment.id);
  const originMs = recording.startedAt?.getTime() ?? segment.run_started_at_ms;
  const unitsPerMs = timescale / 1000;
  // Where this run's media time 0 falls on the recording's axis, never before what is stored.
  const runStart = Math.round((segment.run_started_at_ms - originMs) * unitsPerMs);
  const first = firstDecodeTime(raw);
  const storedEnd = Math.round(recording.durationMs * unitsPerMs);
  // Within a run the times are the encoder's own (contiguous); a run that would start before
  // what is stored (the guest's clock stepped back) starts where the stored video ends.
  const exact = runStart + first;
  const target = exact < storedEnd - 50 * unitsPerMs ? storedEnd : Math.max(0, exact);
  const shifted = shiftDecodeTimes(raw, target - first);
  const offsetMs = Math.round(target / unitsPerMs);
  // The samples' own durations: the playlist's figure is rounded to its keyframes' spacing.
  const durationMs = Math.round(durationUnitsOf(raw) / unitsPerMs) || segment.duration_ms;
  const seq = recording.segmentCount;
  // Where the video has no frames: inside this segment, and between it and the one before.
  const previous =
    seq === 0
      ? null
      : await db.recordingSegment.findUnique({
          where: { claimId_seq: { claimId: recording.claimId, seq: seq - 1 } },
          select: { guestId: true },
        });
  const gaps = segmentGaps({
    spans: sampleSpans(shifted),
    unitsPerMs,
    fps: recording.fps,
    storedEndMs: seq === 0 ? null : recording.durationMs,
    follows: followsOf(previous?.guestId ?? null, segment.id),
  });
  const key = segmentKey(recording.claimId, seq, segment.id);
  await objects.put(key, shifted);
  await db.$transaction(async (tx) => {
    // Guarded by the seq this pull expected: a second puller that raced us stores nothing.
    const claimed = await tx.recording.updateMany({
      where: { claimId: recording.claimId, segmentCount: seq, state: 'recording' },
      data: {
        segmentCount: seq + 1,
        sizeBytes: { increment: shifted.length },
        durationMs: Math.max(recording.durationMs, offsetMs + durationMs),
        ...(recording.startedAt ? {} : { startedAt: new Date(originMs) }),
      },
    });
    if (claimed.count !== 1) throw new Error('another puller stored this segment first');
    await tx.recordingSegment.create({
      data: {
        claimId: recording.claimId,
        seq,
        guestId: segment.id,
        startedAt: new Date(originMs + offsetMs),
        offsetMs,
        durationMs,
        bytes: shifted.length,
        objectKey: key,
        gaps,
      },
    });
  });
}
