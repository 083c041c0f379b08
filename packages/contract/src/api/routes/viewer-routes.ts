import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, listQueryOf, ViewerTicketId } from '../common.js';
import {
  defineRoute,
  defineSocketRoute,
  type RouteDef,
  type SocketRouteDef,
} from '../route-def.js';
import {
  CreateViewerTicketRequest,
  IntrospectViewerTicketRequest,
  ViewerTicket,
  ViewerTicketCreated,
  ViewerCloseCodes,
  ViewerStreamQuery,
  ViewerTicketIntrospection,
} from '../viewer-ticket.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/** Viewer tickets: mint, list, revoke (API key), and introspect (the ticket is the credential). */
export const viewerRoutes = {
  createViewerTicket: defineRoute({
    operationId: 'createViewerTicket',
    method: 'POST',
    path: claimChild('viewer-tickets'),
    tag: 'viewer',
    auth: 'api_key',
    summary: 'Mint an expiring viewer ticket (view-only enforced by the server)',
    description:
      'The ticket is a signed token shown once; only its id is stored. `view` tickets get a stream whose input (keys, pointer, clipboard) the proxy drops; `control` tickets forward it. A control ticket with `handoff_id` is bound to that active handoff: its input renews the lease of the handoff and it is revoked when the handoff ends; while a handoff is active, a control ticket without it is 409 `handoff_active`. A ticket stops working at `expires_at`, on revocation, or when the claim ends, and open streams close within a second.',
    params: ClaimPathParams,
    body: CreateViewerTicketRequest,
    responses: { 201: ViewerTicketCreated },
    errors: [...writeErrors, 'claim_not_active', 'handoff_active', 'conflict'],
  }),
  listViewerTickets: defineRoute({
    operationId: 'listViewerTickets',
    method: 'GET',
    path: claimChild('viewer-tickets'),
    tag: 'viewer',
    auth: 'api_key',
    summary: "List a claim's viewer tickets (never the ticket strings)",
    params: ClaimPathParams,
    query: listQueryOf(ViewerTicketId),
    responses: { 200: listOf(ViewerTicket) },
    errors: [...readErrors],
  }),
  revokeViewerTicket: defineRoute({
    operationId: 'revokeViewerTicket',
    method: 'DELETE',
    path: '/v1/viewer-tickets/{ticket_id}',
    tag: 'viewer',
    auth: 'api_key',
    summary: 'Revoke a viewer ticket (idempotent); open streams close within a second',
    params: z.strictObject({ ticket_id: ViewerTicketId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),
  introspectViewerTicket: defineRoute({
    operationId: 'introspectViewerTicket',
    method: 'POST',
    path: '/v1/viewer/introspect',
    tag: 'viewer',
    auth: 'none',
    summary:
      'What a viewer ticket grants and whether it still does (no API key: the ticket is the credential)',
    description:
      'A correctly signed ticket answers 200 with its `state` (`active`, `expired`, `revoked`, `ended`); anything else is 401 `invalid_ticket`. While `active`, open `stream_url` as a WebSocket with subprotocol `binary` to get the RFB stream (`GET /v1/viewer/stream?ticket=…`; the ticket is checked before the upgrade, 401 otherwise). Close codes: 4001 expired, 4002 revoked, 4003 claim ended, 4029 viewer limit, 4400 protocol violation, 4502 desktop unreachable, 4503 server shutting down.',
    body: IntrospectViewerTicketRequest,
    responses: { 200: ViewerTicketIntrospection },
    errors: ['validation_failed', 'invalid_json', 'payload_too_large', 'invalid_ticket'],
  }),
} satisfies Record<string, RouteDef>;

/** The viewer's stream: the desktop's RFB over a WebSocket, opened with a ticket. */
export const viewerSocketRoutes = {
  streamViewer: defineSocketRoute({
    operationId: 'streamViewer',
    path: '/v1/viewer/stream',
    tag: 'viewer',
    auth: 'none',
    summary: "A claimed desktop's screen (and, with a control ticket, its input) as an RFB stream",
    description:
      "Open a ticket's `stream_url` with subprotocol `binary`; the frames carry the desktop's RFB stream. The ticket is checked before the upgrade: a missing, bad, expired or revoked ticket, or one of an ended claim, is 401 `invalid_ticket` and no socket is opened. A `view` ticket's input (keys, pointer, clipboard) is dropped by the proxy; `control` tickets forward everything.",
    query: ViewerStreamQuery,
    frames: 'binary',
    subprotocol: 'binary',
    protocol: 'RFB (RFC 6143)',
    closeCodes: {
      [ViewerCloseCodes.expired]: 'the ticket expired',
      [ViewerCloseCodes.revoked]: 'the ticket was revoked',
      [ViewerCloseCodes.ended]: 'the claim ended (released or reclaimed): the desktop is gone',
      [ViewerCloseCodes.handoff_ended]:
        "the handoff this control ticket was bound to was returned or its lease expired",
      [ViewerCloseCodes.limit]: 'too many viewers on this ticket or this tenant',
      [ViewerCloseCodes.protocol_violation]:
        'the client sent what its ticket does not allow, or malformed RFB',
      [ViewerCloseCodes.upstream]: "the desktop's VNC server could not be reached or closed",
      [ViewerCloseCodes.shutting_down]: 'the server is shutting down: open a new stream',
    },
    errors: ['invalid_ticket', 'backend_unavailable', 'validation_failed'],
  }),
} satisfies Record<string, SocketRouteDef>;
