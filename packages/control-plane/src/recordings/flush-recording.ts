import { nowOf } from '../context.js';
import { finishRecording } from './finish-recording.js';
import { guestOfSandbox, type RecordingDeps } from './pull-recordings.js';
import { storeSegments, VIDEO_CALL_TIMEOUT_MS } from './store-segments.js';

const FLUSH_OWNER = 'release-flush';
/** Passes over what the guest holds before the recording is finished with what was stored. */
const FLUSH_ATTEMPTS = 3;

/**
 * flushRecording runs when a released claim's desktop is about to be destroyed: it stops the
 * encoder (which closes its last, partial segment), stores what the guest still holds, and
 * finishes the recording. Best effort and bounded: a guest that does not answer leaves the
 * recording finished with what was stored, and the desktop is destroyed either way.
 */
export async function flushRecording(
  deps: RecordingDeps,
  sandboxId: string,
  log: (message: string, err?: unknown) => void = () => {},
): Promise<void> {
  const recording = await deps.db.recording.findFirst({
    where: { state: 'recording', claim: { sandboxId } },
  });
  if (!recording) return;
  // The flush takes the recording over at once (a puller mid-pass may finish its segment: the
  // seq guard and the guest id keep it stored once), so the encoder stops with the claim.
  await deps.db.recording.updateMany({
    where: { claimId: recording.claimId, state: 'recording' },
    data: { leaseOwner: FLUSH_OWNER, leaseUntil: new Date(nowOf(deps).getTime() + 60_000) },
  });
  let endedAt = nowOf(deps);
  const guest = await guestOfSandbox(deps, sandboxId).catch(() => null);
  let stopped = false;
  for (let attempt = 1; guest && attempt <= FLUSH_ATTEMPTS; attempt++) {
    try {
      if (!stopped) endedAt = nowOf(deps);
      // The first attempt stops the encoder; a later one re-lists what the guest still holds.
      const status = stopped
        ? await guest.call('video.status', {}, { timeoutMs: VIDEO_CALL_TIMEOUT_MS })
        : await guest.call('video.stop', {}, { timeoutMs: VIDEO_CALL_TIMEOUT_MS });
      stopped = true;
      await storeSegments(
        deps.db,
        deps.objects.forTenant(recording.tenantId),
        guest,
        recording.claimId,
        status,
      );
      break;
    } catch (err) {
      // A puller behind by many segments at the release leaves the flush most of the video to
      // store: one failed call must not drop the rest (the video would end before ended_at).
      log(
        attempt < FLUSH_ATTEMPTS
          ? 'storing the last segments of the recording failed; trying again'
          : 'the recording could not be flushed: it keeps the segments stored before',
        err,
      );
    }
  }
  await finishRecording(deps, recording.claimId, endedAt);
}
