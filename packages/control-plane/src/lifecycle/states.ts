import { ReleaseReason } from '@cubicle/contract/api';
import type { ClaimStatus, SandboxState } from '@cubicle/db';

/**
 * The claim and sandbox lifecycles, stated once. Every state write goes through this module
 * (TypeScript) or the SQL functions in packages/db/sql/functions (the claim hot path); the test
 * beside this file fails when another file writes a state. A transition is allowed when it is
 * listed here, with its reason: claims record theirs in `release_reason`, sandboxes in
 * `state_reason` (and the detail of a failure in `failure_reason`).
 *
 * Claim: (new) → active | pending → active → released; pending → released.
 * Sandbox: (new) → provisioning → warm → claimed → releasing → deleted, with failed (→ deleted)
 * from provisioning, warm and claimed, and releasing from provisioning and warm when a pool
 * drains or rolls to a new generation.
 */
export const CLAIM_STATUSES = ['pending', 'active', 'released'] as const satisfies ClaimStatus[];
export const SANDBOX_STATES = [
  'provisioning',
  'warm',
  'claimed',
  'releasing',
  'deleted',
  'failed',
] as const satisfies SandboxState[];

/** Claims that hold a unit of the tenant's concurrent-claims quota (tenants.live_claims). */
export const LIVE_CLAIM_STATUSES = ['pending', 'active'] as const satisfies ClaimStatus[];

/** Why a claim starts or becomes active; why it ends is its ReleaseReason. */
export type ClaimStartReason = 'took_warm_sandbox' | 'no_warm_sandbox' | 'fulfilled';

export type SandboxReason =
  /** reconcile created it because the pool needs more */
  | 'pool_needs_more'
  /** the backend started it and its guest answered */
  | 'ready'
  /** a claim took it (cubicle_take_warm_sandbox) */
  | 'claimed'
  /** its claim ended: it is destroyed, never handed to another claim */
  | 'claim_released'
  /** its pool is being deleted */
  | 'pool_drained'
  /** its pool moved to a newer generation (image or spec changed) */
  | 'generation_rolled'
  /** the backend refused or failed to start it (failure_reason says what it answered) */
  | 'provision_failed'
  /** its pool's prime apps could not be opened on it (failure_reason: `prime failed: …`) */
  | 'prime_failed'
  /** a primed app's window went away while it waited warm: it is replaced, never handed out */
  | 'primed_app_exited'
  /** it stayed provisioning past the provisioning timeout */
  | 'provision_timeout'
  /** the backend no longer runs it */
  | 'lost_by_backend'
  /** the backend destroyed it */
  | 'destroyed';

export interface Transition<S, R> {
  /** null: the row is created in `to`. */
  from: S | null;
  to: S;
  reasons: readonly R[];
  /** Where it happens: a lifecycle function, or a SQL function (sql:…). */
  by: string;
}

/** Every reason the contract names may end a claim, pending or active. */
const RELEASE_REASONS = ReleaseReason.options;

export const CLAIM_TRANSITIONS: readonly Transition<
  ClaimStatus,
  ClaimStartReason | ReleaseReason
>[] = [
  { from: null, to: 'active', reasons: ['took_warm_sandbox'], by: 'sql:cubicle_claim_batch' },
  { from: null, to: 'pending', reasons: ['no_warm_sandbox'], by: 'sql:cubicle_claim_batch' },
  { from: 'pending', to: 'active', reasons: ['fulfilled'], by: 'sql:cubicle_fulfil_pending' },
  { from: 'pending', to: 'released', reasons: RELEASE_REASONS, by: 'sql:cubicle_end_claim' },
  { from: 'active', to: 'released', reasons: RELEASE_REASONS, by: 'sql:cubicle_end_claim' },
];

export const SANDBOX_TRANSITIONS: readonly Transition<SandboxState, SandboxReason>[] = [
  { from: null, to: 'provisioning', reasons: ['pool_needs_more'], by: 'createSandboxes' },
  { from: 'provisioning', to: 'warm', reasons: ['ready'], by: 'moveSandboxes' },
  {
    from: 'provisioning',
    to: 'failed',
    reasons: ['provision_failed', 'prime_failed', 'provision_timeout'],
    by: 'moveSandboxes',
  },
  {
    from: 'provisioning',
    to: 'releasing',
    reasons: ['pool_drained', 'generation_rolled'],
    by: 'moveSandboxes',
  },
  {
    from: 'provisioning',
    to: 'releasing',
    reasons: ['claim_released'],
    by: 'sql:cubicle_end_claim',
  },
  { from: 'warm', to: 'claimed', reasons: ['claimed'], by: 'sql:cubicle_take_warm_sandbox' },
  {
    from: 'warm',
    to: 'releasing',
    reasons: ['pool_drained', 'generation_rolled'],
    by: 'moveSandboxes',
  },
  { from: 'warm', to: 'releasing', reasons: ['claim_released'], by: 'sql:cubicle_end_claim' },
  {
    from: 'warm',
    to: 'failed',
    reasons: ['lost_by_backend', 'primed_app_exited'],
    by: 'moveSandboxes',
  },
  { from: 'claimed', to: 'releasing', reasons: ['claim_released'], by: 'sql:cubicle_end_claim' },
  { from: 'claimed', to: 'failed', reasons: ['lost_by_backend'], by: 'moveSandboxes' },
  { from: 'releasing', to: 'deleted', reasons: ['destroyed'], by: 'moveSandboxes' },
  { from: 'failed', to: 'deleted', reasons: ['destroyed'], by: 'moveSandboxes' },
];

/** isSandboxTransition tells whether from → to for this reason is in the table. */
export function isSandboxTransition(
  from: SandboxState | null,
  to: SandboxState,
  reason: SandboxReason,
): boolean {
  return SANDBOX_TRANSITIONS.some(
    (t) => t.from === from && t.to === to && t.reasons.includes(reason),
  );
}

/** isClaimTransition tells whether from → to for this reason is in the table. */
export function isClaimTransition(
  from: ClaimStatus | null,
  to: ClaimStatus,
  reason: ClaimStartReason | ReleaseReason,
): boolean {
  return CLAIM_TRANSITIONS.some(
    (t) => t.from === from && t.to === to && t.reasons.includes(reason),
  );
}
