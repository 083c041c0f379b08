import { nowOf } from '../context.js';
import type { RecordingDeps } from './pull-recordings.js';

const DAY_MS = 86_400_000;

/**
 * finishRecording ends a recording: state `finished`, its end time, and the deadline the
 * retention sweep deletes it at (the tenant's `recording_retention_days` after the end).
 * With `failure`, it ends `failed` with that error instead (kept and swept alike).
 * Idempotent: a finished recording stays as it is.
 */
export async function finishRecording(
  deps: RecordingDeps,
  claimId: string,
  endedAt: Date = nowOf(deps),
  failure?: string,
): Promise<void> {
  const row = await deps.db.recording.findUnique({
    where: { claimId },
    select: { state: true, tenant: { select: { recordingRetentionDays: true } } },
  });
  if (!row || row.state !== 'recording') return;
  await deps.db.recording.updateMany({
    where: { claimId, state: 'recording' },
    data: {
      state: failure === undefined ? 'finished' : 'failed',
      ...(failure === undefined ? {} : { error: failure }),
      endedAt,
      expiresAt: new Date(endedAt.getTime() + row.tenant.recordingRetentionDays * DAY_MS),
      leaseOwner: null,
      leaseUntil: null,
    },
  });
}
