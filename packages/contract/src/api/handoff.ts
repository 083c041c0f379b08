import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ApiKeyId, ClaimId, HandoffId, Timestamp } from './common.js';
import { ViewerTicketCreated } from './viewer-ticket.js';

/**
 * HandoffState: `active` (a human may hold the desktop; the agent's driving calls are 409
 * `handoff_active`), `returned` (the human gave it back, with a note), `expired` (the lease ran
 * out without a return: nobody touched the desktop for `ttl_seconds`), `ended` (the claim ended
 * while the handoff was active, e.g. at its hard maximum lifetime).
 */
export const HandoffState = named(
  'HandoffState',
  z.enum(['active', 'returned', 'expired', 'ended']),
);
export type HandoffState = z.infer<typeof HandoffState>;

/** A lease lasts at most a day; input through the control stream renews it. */
export const HANDOFF_MAX_TTL_SECONDS = 86_400;
export const HANDOFF_DEFAULT_TTL_SECONDS = 900;

export const CreateHandoffRequest = named(
  'CreateHandoffRequest',
  z.strictObject({
    /** Why the agent stops: shown to the human on the dashboard's banner ("a login needs 2FA"). */
    reason: text().min(1).max(1000),
    /** Who should take over (a name, an email, a team): shown on the banner; not an identity check. */
    for: text().min(1).max(200).optional(),
    /**
     * The lease: control comes back to the agent when nobody has sent input through the control
     * stream for this long (each input renews it), or at the return, whichever is first.
     */
    ttl_seconds: z
      .number()
      .int()
      .min(10)
      .max(HANDOFF_MAX_TTL_SECONDS)
      .default(HANDOFF_DEFAULT_TTL_SECONDS),
  }),
);
export type CreateHandoffRequest = z.infer<typeof CreateHandoffRequest>;

export const ReturnHandoffRequest = named(
  'ReturnHandoffRequest',
  z.strictObject({
    /** What the human wants the agent to know ("logged in; the report is open"). */
    note: text().max(4000).optional(),
  }),
);
export type ReturnHandoffRequest = z.infer<typeof ReturnHandoffRequest>;

/** Handoff is one hand-over of a claim's desktop from its agent to a human, and back. */
export const Handoff = named(
  'Handoff',
  z.strictObject({
    id: HandoffId,
    claim_id: ClaimId,
    state: HandoffState,
    reason: z.string(),
    for: z.string().nullable(),
    ttl_seconds: z.number().int(),
    /** When control returns to the agent unless input renews the lease first. */
    lease_expires_at: Timestamp,
    requested_at: Timestamp,
    requested_by_key_id: ApiKeyId.nullable(),
    /** The first input a human sent through a control stream of this handoff; null until then. */
    taken_at: Timestamp.nullable(),
    /** The key that minted the control ticket that input came through (the human's session). */
    taken_by_key_id: ApiKeyId.nullable(),
    last_input_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    /** The key that returned it; null for a lease that expired or a claim that ended. */
    ended_by_key_id: ApiKeyId.nullable(),
    /** The human's note on return, for the agent; null otherwise. */
    note: z.string().nullable(),
    /** How long the desktop was out of the agent's hands: ended_at − requested_at (null while active). */
    held_ms: z.number().int().min(0).nullable(),
  }),
);
export type Handoff = z.infer<typeof Handoff>;

/**
 * HandoffCreated is the new handoff with a `control` viewer ticket bound to it, shown once: pass
 * `control.viewer_url` to the human (the dashboard's "Take over" banner mints its own).
 */
export const HandoffCreated = named(
  'HandoffCreated',
  z.strictObject({ ...Handoff.shape, control: ViewerTicketCreated }),
);
export type HandoffCreated = z.infer<typeof HandoffCreated>;

export const HandoffPathParams = z.strictObject({ id: ClaimId, handoff_id: HandoffId });
export type HandoffPathParams = z.infer<typeof HandoffPathParams>;

/** HandoffListQuery: a claim's handoffs newest first; `state=active` for the one in progress. */
export const HandoffListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: HandoffId.optional(),
  state: HandoffState.optional(),
});
export type HandoffListQuery = z.infer<typeof HandoffListQuery>;

export const HandoffRequestedData = named(
  'HandoffRequestedData',
  z.strictObject({
    handoff_id: HandoffId,
    claim_id: ClaimId,
    reason: z.string(),
    for: z.string().nullable(),
    lease_expires_at: Timestamp,
  }),
);

export const HandoffReturnedData = named(
  'HandoffReturnedData',
  z.strictObject({
    handoff_id: HandoffId,
    claim_id: ClaimId,
    /** `returned` by a human, `expired` lease, or `ended` with the claim. */
    state: z.enum(['returned', 'expired', 'ended']),
    note: z.string().nullable(),
    held_ms: z.number().int().min(0),
  }),
);
