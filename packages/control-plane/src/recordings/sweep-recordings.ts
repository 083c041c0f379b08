import { nowOf } from '../context.js';
import type { RecordingDeps } from './pull-recordings.js';
import { recordingPrefix } from './store-segments.js';

/**
 * sweepRecordings deletes recordings past their retention deadline (`expires_at`, set when they
 * finished): the objects first, then the row (its segments go with it), so a row never names a
 * missing object. Idempotent; reads "now" from the deps' clock so tests move time. Returns how
 * many recordings went.
 */
export async function sweepRecordings(deps: RecordingDeps, limit = 100): Promise<number> {
  const due = await deps.db.recording.findMany({
    where: { expiresAt: { lt: nowOf(deps) } },
    select: { claimId: true, tenantId: true },
    take: limit,
  });
  for (const { claimId, tenantId } of due) {
    await deps.objects.forTenant(tenantId).deletePrefix(recordingPrefix(claimId));
    await deps.db.recording.deleteMany({ where: { claimId } });
  }
  return due.length;
}
