import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, HandoffId, Timestamp, ViewerTicketId } from './common.js';

/** ViewerMode: `view` is enforced by the stream proxy (input is dropped server-side), not by the client. */
export const ViewerMode = named('ViewerMode', z.enum(['view', 'control']));
export type ViewerMode = z.infer<typeof ViewerMode>;

/** VIEWER_TICKET_MAX_TTL_SECONDS bounds how long a leaked ticket can be used. */
export const VIEWER_TICKET_MAX_TTL_SECONDS = 86_400;

export const CreateViewerTicketRequest = named(
  'CreateViewerTicketRequest',
  z.strictObject({
    mode: ViewerMode.default('view'),
    ttl_seconds: z.number().int().min(1).max(VIEWER_TICKET_MAX_TTL_SECONDS).default(3600),
    /**
     * A ticket for this handoff of the claim (it must be active; 409 `conflict` once it ended),
     * revoked when the handoff ends. With `mode: "control"` its input reaches the desktop and
     * renews the handoff's lease; a `view` one stays view-only.
     */
    handoff_id: HandoffId.optional(),
  }),
);
export type CreateViewerTicketRequest = z.infer<typeof CreateViewerTicketRequest>;

export const ViewerTicket = named(
  'ViewerTicket',
  z.strictObject({
    id: ViewerTicketId,
    claim_id: ClaimId,
    mode: ViewerMode,
    /** The handoff a `control` ticket is bound to; null for every other ticket. */
    handoff_id: HandoffId.nullable(),
    expires_at: Timestamp,
    revoked_at: Timestamp.nullable(),
    created_at: Timestamp,
  }),
);
export type ViewerTicket = z.infer<typeof ViewerTicket>;

/** ViewerTicketCreated carries the signed ticket and ready-to-embed markup, once. */
export const ViewerTicketCreated = named(
  'ViewerTicketCreated',
  z.strictObject({
    ...ViewerTicket.shape,
    ticket: z.string(),
    /** `<CUBICLE_WEB_URL>/embed/<ticket>`: the view-only page to put in an iframe. */
    viewer_url: z.url(),
    /** An `<iframe>` of `viewer_url`, sandboxed, ready to paste into a page. */
    embed_html: z.string(),
  }),
);
export type ViewerTicketCreated = z.infer<typeof ViewerTicketCreated>;

/** ViewerTicketClaims is the signed payload (JWT claims) of a ticket. */
export const ViewerTicketClaims = z.strictObject({
  jti: ViewerTicketId,
  tnt: z.string(),
  clm: ClaimId,
  sbx: z.string(),
  mode: ViewerMode,
  /** The handoff a control ticket is bound to (absent for others). */
  hof: HandoffId.optional(),
  iat: z.number().int(),
  exp: z.number().int(),
});
export type ViewerTicketClaims = z.infer<typeof ViewerTicketClaims>;

/** A signed ticket is a compact JWS: three base64url parts, bounded in size. */
export const ViewerTicketString = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a viewer ticket (compact JWS)');

export const IntrospectViewerTicketRequest = named(
  'IntrospectViewerTicketRequest',
  z.strictObject({ ticket: text().min(1).max(4096) }),
);
export type IntrospectViewerTicketRequest = z.infer<typeof IntrospectViewerTicketRequest>;

/**
 * ViewerTicketState is what a viewer page shows: `active` (connect to `stream_url`), `expired`
 * (the ticket's time is over), `revoked` (someone revoked it) or `ended` (its claim ended).
 */
export const ViewerTicketState = named(
  'ViewerTicketState',
  z.enum(['active', 'expired', 'revoked', 'ended']),
);
export type ViewerTicketState = z.infer<typeof ViewerTicketState>;

/** ViewerTicketIntrospection is what a correctly signed ticket grants, and whether it still does. */
export const ViewerTicketIntrospection = named(
  'ViewerTicketIntrospection',
  z.strictObject({
    state: ViewerTicketState,
    mode: ViewerMode,
    claim_id: ClaimId,
    /** The handoff a control ticket is bound to: the embed takes input (`mode=control`) only then. */
    handoff_id: HandoffId.nullable(),
    expires_at: Timestamp,
    /** The tenant's allowed embedding origins (for CSP `frame-ancestors`). */
    embed_origins: z.array(z.string()),
    /** Absolute WebSocket URL of the RFB stream (subprotocol `binary`), ticket included. */
    stream_url: z.string(),
  }),
);
export type ViewerTicketIntrospection = z.infer<typeof ViewerTicketIntrospection>;

/** ViewerStreamQuery is the stream endpoint's query: the ticket is the only credential. */
export const ViewerStreamQuery = z.strictObject({ ticket: ViewerTicketString });
export type ViewerStreamQuery = z.infer<typeof ViewerStreamQuery>;

/**
 * ViewerCloseCodes are the WebSocket close codes of the stream, so a page can tell why it ended.
 * 4xxx codes are application-defined (RFC 6455 §7.4.2).
 */
export const ViewerCloseCodes = {
  /** The ticket expired while the stream was open. */
  expired: 4001,
  /** The ticket was revoked. */
  revoked: 4002,
  /** The claim ended (released, reclaimed); the desktop is gone. */
  ended: 4003,
  /** The handoff this control ticket was bound to was returned or its lease expired. */
  handoff_ended: 4004,
  /** Too many viewers on this ticket or this tenant. */
  limit: 4029,
  /** The client sent something a viewer may not (malformed or unknown RFB in view mode). */
  protocol_violation: 4400,
  /** The sandbox's VNC server could not be reached or closed the connection. */
  upstream: 4502,
  /** The API process is shutting down; reconnect. */
  shutting_down: 4503,
} as const;
export type ViewerCloseReason = keyof typeof ViewerCloseCodes;
