import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, ReplayLinkId, Timestamp } from './common.js';
import { ViewerTicketState } from './viewer-ticket.js';

/** REPLAY_LINK_MAX_TTL_SECONDS bounds how long a leaked link shows a recording (30 days). */
export const REPLAY_LINK_MAX_TTL_SECONDS = 30 * 86_400;

export const CreateReplayLinkRequest = named(
  'CreateReplayLinkRequest',
  z.strictObject({
    ttl_seconds: z.number().int().min(1).max(REPLAY_LINK_MAX_TTL_SECONDS).default(86_400),
  }),
);
export type CreateReplayLinkRequest = z.infer<typeof CreateReplayLinkRequest>;

export const ReplayLink = named(
  'ReplayLink',
  z.strictObject({
    id: ReplayLinkId,
    claim_id: ClaimId,
    expires_at: Timestamp,
    revoked_at: Timestamp.nullable(),
    created_at: Timestamp,
  }),
);
export type ReplayLink = z.infer<typeof ReplayLink>;

/** ReplayLinkCreated carries the signed token, the page to open and ready-to-embed markup, once. */
export const ReplayLinkCreated = named(
  'ReplayLinkCreated',
  z.strictObject({
    ...ReplayLink.shape,
    /** `Authorization: Bearer <token>` on the claim's recording, media and timeline (read only). */
    token: z.string(),
    /** `<CUBICLE_WEB_URL>/replay/<token>`: the replay page, no sign-in needed. */
    replay_url: z.url(),
    /** An `<iframe>` of `replay_url`, sandboxed, ready to paste into a page. */
    embed_html: z.string(),
  }),
);
export type ReplayLinkCreated = z.infer<typeof ReplayLinkCreated>;

/** ReplayLinkClaims is the signed payload (JWT claims) of a replay link's token. */
export const ReplayLinkClaims = z.strictObject({
  jti: ReplayLinkId,
  tnt: z.string(),
  clm: ClaimId,
  iat: z.number().int(),
  exp: z.number().int(),
});
export type ReplayLinkClaims = z.infer<typeof ReplayLinkClaims>;

export const IntrospectReplayLinkRequest = named(
  'IntrospectReplayLinkRequest',
  z.strictObject({ token: text().min(1).max(4096) }),
);
export type IntrospectReplayLinkRequest = z.infer<typeof IntrospectReplayLinkRequest>;

/**
 * ReplayLinkState: `active` (the link shows its recording), `expired`, `revoked`. A replay
 * outlives its claim, so unlike a viewer ticket an ended claim does not end the link.
 */
export const ReplayLinkState = named('ReplayLinkState', ViewerTicketState.exclude(['ended']));
export type ReplayLinkState = z.infer<typeof ReplayLinkState>;

/** ReplayLinkIntrospection is what a correctly signed replay link grants, and whether it still does. */
export const ReplayLinkIntrospection = named(
  'ReplayLinkIntrospection',
  z.strictObject({
    state: ReplayLinkState,
    claim_id: ClaimId,
    expires_at: Timestamp,
    /** The tenant's allowed embedding origins (for CSP `frame-ancestors`, as the live view). */
    embed_origins: z.array(z.string()),
  }),
);
export type ReplayLinkIntrospection = z.infer<typeof ReplayLinkIntrospection>;
