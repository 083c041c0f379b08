import { z } from 'zod';
import { named } from '../registry.js';
import { ClaimId, Timestamp, ViewerTicketId } from './common.js';

/** ViewerMode: `view` is enforced by the stream proxy (input is dropped server-side), not by the client. */
export const ViewerMode = named('ViewerMode', z.enum(['view', 'control']));
export type ViewerMode = z.infer<typeof ViewerMode>;

export const CreateViewerTicketRequest = named(
  'CreateViewerTicketRequest',
  z.strictObject({
    mode: ViewerMode.default('view'),
    ttl_seconds: z.number().int().min(10).max(86_400).default(3600),
  }),
);
export type CreateViewerTicketRequest = z.infer<typeof CreateViewerTicketRequest>;

export const ViewerTicket = named(
  'ViewerTicket',
  z.strictObject({
    id: ViewerTicketId,
    claim_id: ClaimId,
    mode: ViewerMode,
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
    viewer_url: z.url(),
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
  iat: z.number().int(),
  exp: z.number().int(),
});
export type ViewerTicketClaims = z.infer<typeof ViewerTicketClaims>;
