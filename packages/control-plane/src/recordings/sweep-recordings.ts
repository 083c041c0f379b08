import { nowOf } from '../context.js';
import type { RecordingDeps } from './pull-recordings.js';
import { RECORDING_DELETED } from './recording-kept.js';
import { recordingPrefix } from './store-segments.js';

/**
 * sweepRecordings deletes recordings past their retention deadline (`expires_at`, set when they
 * finished): the objects first, then the segment rows, and the recording row becomes a
 * `deleted` marker holding no media. The marker is what answers 404 for the claim's timeline
 * too (getClaimTimeline), so a replay link that outlives the recording reads nothing more; the
 * claim's own records (actions, runs) stay with the claim. A row never names a missing object.
 * Idempotent; reads "now" from the deps' clock so tests move time. Returns how many went.
 */
export async function sweepRecordings(deps: RecordingDeps, limit = 100): Promise<number> {
  const due = await deps.db.recording.findMany({
    where: { expiresAt: { lt: nowOf(deps) }, state: { not: RECORDING_DELETED } },
    select: { claimId: true, tenantId: true },
    take: limit,
  });
  for (const { claimId, tenantId } of due) {
    await deps.objects.forTenant(tenantId).deletePrefix(recordingPrefix(claimId));
    await deps.db.$transaction([
      deps.db.recordingSegment.deleteMany({ where: { claimId } }),
      deps.db.recording.update({
        where: { claimId },
        data: {
          state: RECORDING_DELETED,
          initKey: null,
          initBytes: 0,
          sizeBytes: 0,
          segmentCount: 0,
          durationMs: 0,
          leaseOwner: null,
          leaseUntil: null,
        },
      }),
    ]);
  }
  return due.length;
}
