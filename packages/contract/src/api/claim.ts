import { z } from 'zod';
import { named } from '../registry.js';
import { crossFieldRules } from '../rules.js';
import { ClaimId, Metadata, PoolId, ResourceName, SnapshotId, Timestamp } from './common.js';
import { PrimedWindow } from './pool-prime.js';
import { Sandbox } from './sandbox.js';
import { EgressNarrowing } from './egress.js';
import { ClaimSecrets, SecretName } from './secret.js';
import { ProfileName } from './profile.js';
import { RecordingOptions } from './recording.js';

/** ClaimStatus: pending (no sandbox yet, 202), active (holds a sandbox), released (ended). */
export const ClaimStatus = named('ClaimStatus', z.enum(['pending', 'active', 'released']));
export type ClaimStatus = z.infer<typeof ClaimStatus>;

/** ReleaseReason records why a claim ended; reclaim reasons are set by the worker. */
export const ReleaseReason = named(
  'ReleaseReason',
  z.enum([
    'released_by_client',
    'ttl_expired',
    'idle_timeout',
    'max_lifetime',
    'pool_deleted',
    'sandbox_failed',
    'provision_timeout',
  ]),
);
export type ReleaseReason = z.infer<typeof ReleaseReason>;

export const Claim = named(
  'Claim',
  z.strictObject({
    id: ClaimId,
    name: ResourceName,
    pool: ResourceName,
    pool_id: PoolId,
    status: ClaimStatus,
    /** The sandbox once the claim is active; null while pending. */
    sandbox: Sandbox.nullable(),
    /**
     * The windows the pool's `prime` apps opened on the sandbox, in prime order: act on them by
     * `window_id` at once. Empty while pending and for pools that prime nothing.
     */
    primed_windows: z.array(PrimedWindow),
    metadata: Metadata,
    ttl_seconds: z.number().int(),
    expires_at: Timestamp,
    max_expires_at: Timestamp,
    idle_timeout_seconds: z.number().int().nullable(),
    last_heartbeat_at: Timestamp,
    released_at: Timestamp.nullable(),
    release_reason: ReleaseReason.nullable(),
    created_at: Timestamp,
    /**
     * Time to first confirmed action: ms from the claim's creation to its first ActionResult with
     * `effect: confirmed` (the SLO an agent's owner feels); null until there is one.
     */
    time_to_first_confirmed_action_ms: z.number().min(0).nullable(),
    /**
     * Set while the claim's desktop is paused (frozen: no CPU; `POST /v1/claims/{id}/pause`, or
     * the pool's `idle_pause_seconds`); null while it runs. A paused claim stays `active`; any
     * driving call, viewer connection or run start resumes it first. While paused, neither the
     * TTL (`expires_at`) nor the idle window runs down: resuming moves both on by the time
     * paused. Only `max_expires_at` (the hard maximum) counts paused time.
     */
    paused_at: Timestamp.nullable(),
    /** Seconds the claim has spent paused so far (the open pause included). */
    paused_seconds: z.number().min(0),
  }),
);
export type Claim = z.infer<typeof Claim>;

/**
 * CreateClaimRequest: `name` makes the call a reconnect (a live claim of that name comes back);
 * `wait_seconds` bounds how long the call waits for a sandbox to be provisioned before answering
 * 202 with the claim pending. Pair it with an `Idempotency-Key` header when retrying.
 */
export const CreateClaimRequest = named(
  'CreateClaimRequest',
  z
    .strictObject({
      name: ResourceName.optional(),
      ttl_seconds: z
        .number()
        .int()
        .min(1)
        .max(7 * 86_400)
        .optional(),
      metadata: Metadata.default({}),
      wait_seconds: z.number().int().min(0).max(120).default(20),
      /** Secrets for this claim, `{NAME: value}`: sealed at rest, written into the desktop as files, never returned. */
      secrets: ClaimSecrets.optional(),
      /** Names of the tenant's stored secrets (`/v1/secrets`) to attach to the claim, newest version. */
      stored_secrets: z.array(SecretName).max(64).optional(),
      /** Narrows the pool's egress policy for this claim (never widens it: `egress_widens_pool`). */
      egress: EgressNarrowing.optional(),
      /**
       * Persistent profile (ProfileName, the tenant's own id for it, e.g. an end user's): the
       * claim's desktop gets the profile's last saved files (the pool's `profile_paths`) restored
       * before the call answers (a first use starts empty); they are saved back at release and on
       * `POST /v1/claims/{id}/profile/save`. One live claim holds a profile at a time (409
       * `profile_in_use`). Not with `from_snapshot`.
       */
      profile: ProfileName.optional(),
      /**
       * Fork: the claim's desktop is a warm desktop with this snapshot (`/v1/snapshots`) restored
       * into it before the call answers. Each fork is independent of the others and of the source.
       */
      from_snapshot: SnapshotId.optional(),
      /**
       * Forks to make (1–20, with `from_snapshot` only, without `name`). Given, the answer is a
       * ClaimBatch `{claims: [...]}`; left out, it is one Claim as always.
       */
      count: z.number().int().min(1).max(20).optional(),
      /**
       * Video recording of this claim (RecordingOptions): left out, the pool's `recording` decides;
       * asking for it from a pool that offers none is 409 `recording_not_allowed`.
       */
      recording: RecordingOptions.optional(),
    })
    // Enforced where secrets are sealed (control-plane sealClaimSecrets), published here.
    .meta({
      ...crossFieldRules(
        'A secret name is given as a value (`secrets`) or stored (`stored_secrets`), not both. `count` needs `from_snapshot` and excludes `name`; `profile` excludes `from_snapshot`.',
        {
          rule: 'disjoint',
          keys_of: 'secrets',
          items_of: 'stored_secrets',
        },
      ),
      // Plain JSON Schema for the field pairs (enforced by the control plane's claimOrFork and
      // claimWithProfile): a fork batch is unnamed, and a profile claim is not a fork.
      dependentRequired: { count: ['from_snapshot'] },
      not: {
        anyOf: [{ required: ['count', 'name'] }, { required: ['profile', 'from_snapshot'] }],
      },
    }),
);
export type CreateClaimRequest = z.infer<typeof CreateClaimRequest>;

/**
 * ClaimBatch answers a claim request with `count` (forks of a snapshot): every claim, each active
 * with the snapshot restored. A request without `count` keeps answering one Claim.
 */
export const ClaimBatch = named('ClaimBatch', z.strictObject({ claims: z.array(Claim).min(1) }));
export type ClaimBatch = z.infer<typeof ClaimBatch>;

/** UpdateClaimRequest extends the TTL from now, capped at `max_expires_at`. */
export const UpdateClaimRequest = named(
  'UpdateClaimRequest',
  z.strictObject({
    ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400),
  }),
);
export type UpdateClaimRequest = z.infer<typeof UpdateClaimRequest>;

export const ClaimListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** The previous page's `next_cursor` (a claim id: claims page newest first by id). */
  cursor: ClaimId.optional(),
  pool: ResourceName.optional(),
  status: ClaimStatus.optional(),
});
export type ClaimListQuery = z.infer<typeof ClaimListQuery>;

export const ClaimPathParams = z.strictObject({ id: ClaimId });
