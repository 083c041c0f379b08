import { AppError } from '@cubicle/contract/errors';
import { isClaimLive, whyClaimIsNotLive } from '../lifecycle/claim-liveness.js';
import { liveGuestRow, type LiveGuestRow } from '../repositories/claims.js';
import { driveTargetRow } from '../repositories/drive-target.js';
import type { PoolTarget } from '../repositories/pool-target.js';

/** The pool (`db`) or a checked-out client (a caller holding a lock looks up on it). */
export type GuestSql = PoolTarget;

/** The guest of a live claim: where its driver listens and the sealed token it takes. */
export interface LiveGuest {
  tenantId: string;
  claimId: string;
  sandboxId: string;
  /** `http://host:port` or `http+unix://…`; null while the backend has not reported one. */
  endpoint: string | null;
  /** Sealed with the sandbox id; null when the lookup did not ask for it (or none is stored). */
  tokenCiphertext: Buffer | null;
  /** The claim holds secrets: its screenshots are not kept, its records are redacted. */
  hasSecrets: boolean;
  /** The claim's active handoff (a human holds the desktop); null when none. */
  handoffId: string | null;
}

/**
 * What a lookup found, as a value: the caller decides what each means for it (a guest call
 * answers an error, a run ends `claim_ended`, a secrets delivery is skipped).
 */
export type GuestLookup =
  | { kind: 'live'; guest: LiveGuest }
  /** The tenant has no such claim. */
  | { kind: 'not_found' }
  /** The claim is not live (isClaimLive); `why` is expired, pending or released. */
  | { kind: 'not_live'; why: string; releaseReason: string | null }
  /** The claim is live but no longer holds the sandbox expected (or it is no longer claimed). */
  | { kind: 'sandbox_gone' };

export interface GuestTarget {
  tenantId: string;
  claimId: string;
  /** The sandbox the caller was sent to (a lane's job); the claim must still hold it. */
  sandboxId?: string | undefined;
  /** The caller's clock (nowOf): liveness is judged at this instant. */
  now: Date;
}

/**
 * findLiveGuest is the one lookup of a claim, its sandbox and the sandbox's guest: one indexed
 * statement (liveGuestRow, named: planned once per connection; it runs before every guest call
 * the worker makes), its liveness decided by isClaimLive on the caller's clock. The token's ciphertext is
 * read only when asked for (`withToken`): the API routes a call by the sandbox id alone and
 * never holds a guest token it does not use.
 */
export async function findLiveGuest(
  sql: GuestSql,
  target: GuestTarget,
  withToken: boolean,
): Promise<GuestLookup> {
  return lookupOf(await liveGuestRow(sql, target.tenantId, target.claimId, withToken), target);
}

/**
 * findDriveTarget is findLiveGuest for a driving call of a sandbox's lane, in the same one round
 * trip: it also records the call as the claim's activity (auto-pause's idle clock) and says
 * whether the claim is paused (the caller thaws it before talking to the guest). Token included.
 */
export async function findDriveTarget(
  sql: GuestSql,
  target: GuestTarget,
): Promise<{ lookup: GuestLookup; isPaused: boolean }> {
  const row = await driveTargetRow(sql, target.tenantId, target.claimId, target.now);
  return { lookup: lookupOf(row, target), isPaused: row?.paused ?? false };
}

/** lookupOf judges a claim's row (liveGuestRow's columns) at the caller's clock. */
function lookupOf(row: LiveGuestRow | undefined, target: GuestTarget): GuestLookup {
  if (!row) return { kind: 'not_found' };
  const claim = { status: row.status, expiresAt: row.expires_at };
  if (!isClaimLive(claim, target.now))
    return { kind: 'not_live', why: whyClaimIsNotLive(claim), releaseReason: row.release_reason };
  if (
    !row.sandbox_id ||
    row.sandbox_state !== 'claimed' ||
    (target.sandboxId !== undefined && row.sandbox_id !== target.sandboxId)
  )
    return { kind: 'sandbox_gone' };
  return {
    kind: 'live',
    guest: {
      tenantId: target.tenantId,
      claimId: target.claimId,
      sandboxId: row.sandbox_id,
      endpoint: row.guest_endpoint,
      tokenCiphertext: row.guest_token_ciphertext,
      hasSecrets: row.has_secrets,
      handoffId: row.handoff_id,
    },
  };
}

/**
 * liveGuestOrThrow answers the live guest or the AppError a caller of a guest operation gets:
 * 404 for a claim the tenant does not have, 409 `claim_not_active` for one that is not live. A
 * caller sent to a sandbox (a lane's job, enqueued after the API found the claim live) is told
 * `claim_not_active` for a claim that vanished or moved, as the claim ended under it.
 */
export function liveGuestOrThrow(lookup: GuestLookup, target: GuestTarget): LiveGuest {
  switch (lookup.kind) {
    case 'live':
      return lookup.guest;
    case 'not_found':
      if (target.sandboxId !== undefined)
        throw new AppError('claim_not_active', 'the claim is no longer active');
      throw new AppError('not_found', 'no such claim');
    case 'not_live':
      throw new AppError('claim_not_active', `the claim is ${lookup.why}`);
    case 'sandbox_gone':
      throw new AppError('claim_not_active', 'the claim is no longer active');
    default:
      return lookup satisfies never;
  }
}
