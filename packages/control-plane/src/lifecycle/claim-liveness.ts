import type { ClaimStatus } from '@cubicle/db';

/** What the liveness rule reads of a claim (the ORM's names; map a raw row's columns to them). */
export interface ClaimLivenessFacts {
  status: ClaimStatus | string;
  expiresAt: Date;
}

/**
 * isClaimLive is the one rule for "the claim is live": it is active (it holds its sandbox) and
 * its TTL deadline has not passed at `now`. A claim past its deadline is no longer live although
 * the reclaim sweep may not have released it yet: nothing may be delivered to its desktop, no
 * run started, no secret added. `now` is the caller's injectable clock (nowOf), never Date.now.
 * Its SQL twin is `cubicle_claim_is_live(status, expires_at, now)` (packages/db/sql/functions),
 * for statements that filter on liveness; the claim-liveness integration test holds the two
 * equal, and claim-status.test.ts fails on a status comparison made anywhere else.
 */
export function isClaimLive(claim: ClaimLivenessFacts, now: Date): boolean {
  return claim.status === 'active' && claim.expiresAt.getTime() > now.getTime();
}

/**
 * isClaimActive: the claim holds its desktop (not pending, not released), whatever its deadline;
 * a profile or snapshot restore needs one before the claim can answer.
 */
export function isClaimActive(status: ClaimStatus | string): boolean {
  return status === 'active';
}

/**
 * whyClaimIsNotLive names what a claim that is not live is, for messages: `expired` for an
 * active claim past its deadline, else its status (`pending`, `released`).
 */
export function whyClaimIsNotLive(claim: ClaimLivenessFacts): string {
  return claim.status === 'active' ? 'expired' : claim.status;
}

/**
 * claimAnswerStatus is the HTTP status a claim request answers with: 201 once the claim holds a
 * sandbox, 202 while it waits (or when it ended waiting), as cubicle_claim_batch answers a replay.
 */
export function claimAnswerStatus(status: ClaimStatus): 201 | 202 {
  return status === 'active' ? 201 : 202;
}
