import type { Recording } from '@cubicle/db';
import { nowOf } from '../context.js';
import { open } from '../crypto/keyring.js';
import { findLiveGuest } from '../guest/find-live-guest.js';
import { isClaimLive } from '../lifecycle/claim-liveness.js';
import { sandboxGuestClient, type SandboxGuestClient } from '../guest/guest-client.js';
import type { Resources } from '../resources.js';
import { finishRecording } from './finish-recording.js';
import { storeSegments, VIDEO_CALL_TIMEOUT_MS } from './store-segments.js';

export type RecordingDeps = Pick<Resources, 'db' | 'keyring' | 'objects'> &
  Partial<Pick<Resources, 'now'>>;

/** How long a puller's hold on a recording lasts without renewal (a dead worker's ends then). */
export const RECORDING_LEASE_MS = 10_000;
/** A released claim whose desktop was never flushed (its worker died) is finished after this. */
const UNFLUSHED_GRACE_MS = 60_000;
/**
 * ...but while its desktop still stands (destroy pending: the release flush will come), only
 * after this: finishing at the release time with what was stored left out whatever a puller
 * behind by tens of seconds had not stored yet, and the video ended before `ended_at`.
 */
const RELEASING_GRACE_MS = 10 * 60_000;

/**
 * leaseRecording takes (or renews) `owner`'s hold on a recording still recording; false when
 * another live worker holds it. One statement, so two workers never both win.
 */
export async function leaseRecording(
  deps: RecordingDeps,
  claimId: string,
  owner: string,
): Promise<boolean> {
  const now = nowOf(deps);
  const taken = await deps.db.recording.updateMany({
    where: {
      claimId,
      state: 'recording',
      OR: [{ leaseOwner: null }, { leaseOwner: owner }, { leaseUntil: { lt: now } }],
    },
    data: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + RECORDING_LEASE_MS) },
  });
  return taken.count === 1;
}

/** guestOfSandbox is a client for a sandbox's guest by its stored endpoint and sealed token. */
export async function guestOfSandbox(
  deps: RecordingDeps,
  sandboxId: string,
): Promise<SandboxGuestClient | null> {
  const sandbox = await deps.db.sandbox.findUnique({
    where: { id: sandboxId },
    select: { guestEndpoint: true, guestTokenCiphertext: true },
  });
  if (!sandbox?.guestEndpoint || !sandbox.guestTokenCiphertext) return null;
  const token = open(deps.keyring, Buffer.from(sandbox.guestTokenCiphertext), sandboxId);
  return sandboxGuestClient(sandbox.guestEndpoint, token);
}

/**
 * pullRecording is one pass over one recording whose claim is live: make sure the guest's
 * encoder runs (a restarted guest comes back idle; the guest itself restarts a dead encoder),
 * then store every finished segment it lists. Returns segments stored.
 */
export async function pullRecording(deps: RecordingDeps, recording: Recording): Promise<number> {
  const lookup = await findLiveGuest(
    deps.db,
    { tenantId: recording.tenantId, claimId: recording.claimId, now: nowOf(deps) },
    false,
  );
  if (lookup.kind !== 'live') return 0;
  const guest = await guestOfSandbox(deps, lookup.guest.sandboxId);
  if (!guest) return 0;
  let status = await guest.call('video.status', {}, { timeoutMs: VIDEO_CALL_TIMEOUT_MS });
  if (status.state === 'idle' || status.state === 'stopped') {
    status = await guest.call(
      'video.start',
      { fps: recording.fps, quality: recording.quality as 'low' | 'medium' | 'high' },
      { timeoutMs: VIDEO_CALL_TIMEOUT_MS },
    );
  }
  const stored = await storeSegments(
    deps.db,
    deps.objects.forTenant(recording.tenantId),
    guest,
    recording.claimId,
    status,
  );
  // The guest gave up on its encoder (e.g. no FFmpeg in the image): a recording with nothing
  // stored failed; one with segments keeps them and says why it stopped.
  if (status.state === 'failed' && status.segments.length === 0) {
    const error = (status.error ?? 'the encoder failed').slice(0, 1000);
    if (recording.segmentCount === 0)
      await finishRecording(deps, recording.claimId, nowOf(deps), error);
    else
      await deps.db.recording.updateMany({
        where: { claimId: recording.claimId, state: 'recording', error: null },
        data: { error },
      });
  }
  return stored;
}

/**
 * pullReleasing stores the finished segments of a released claim's desktop that is still
 * standing (its destroy, which flushes the rest, is pending). The encoder is not started again.
 */
async function pullReleasing(
  deps: RecordingDeps,
  recording: Recording,
  sandboxId: string,
): Promise<number> {
  const guest = await guestOfSandbox(deps, sandboxId);
  if (!guest) return 0;
  const status = await guest.call('video.status', {}, { timeoutMs: VIDEO_CALL_TIMEOUT_MS });
  return storeSegments(
    deps.db,
    deps.objects.forTenant(recording.tenantId),
    guest,
    recording.claimId,
    status,
  );
}

/**
 * pullDueRecordings is the worker's periodic pass: every recording still `recording` that this
 * worker can lease is pulled; one whose claim ended long ago without a flush is finished with
 * what was stored. Errors of one recording never stop the others.
 */
export async function pullDueRecordings(
  deps: RecordingDeps,
  owner: string,
  onError: (claimId: string, err: unknown) => void = () => {},
): Promise<number> {
  const now = nowOf(deps);
  const due = await deps.db.recording.findMany({
    where: {
      state: 'recording',
      OR: [{ leaseOwner: null }, { leaseOwner: owner }, { leaseUntil: { lt: now } }],
    },
    include: {
      claim: {
        select: {
          status: true,
          expiresAt: true,
          releasedAt: true,
          sandboxId: true,
          sandbox: { select: { state: true } },
        },
      },
    },
    take: 200,
  });
  let stored = 0;
  await Promise.all(
    due.map(async ({ claim, ...recording }) => {
      try {
        if (!isClaimLive(claim, now)) {
          // Pending or past its deadline: wait. Released long ago without a flush: finish.
          const endedAt = claim.releasedAt;
          const standing = claim.sandbox?.state === 'releasing' && claim.sandboxId !== null;
          const grace = standing ? RELEASING_GRACE_MS : UNFLUSHED_GRACE_MS;
          if (endedAt && now.getTime() - endedAt.getTime() > grace) {
            await finishRecording(deps, recording.claimId, endedAt);
            return;
          }
          // Released, its desktop not destroyed yet: keep storing what the encoder finished, so
          // the release flush (which takes the lease) is left only the last segments.
          if (endedAt && standing && (await leaseRecording(deps, recording.claimId, owner)))
            stored += await pullReleasing(deps, recording, claim.sandboxId!);
          return;
        }
        if (!(await leaseRecording(deps, recording.claimId, owner))) return;
        stored += await pullRecording(deps, recording);
      } catch (err) {
        onError(recording.claimId, err);
      }
    }),
  );
  return stored;
}
