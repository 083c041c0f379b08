import { Routes, type CreateHandoffRequest, type HandoffCreated } from '@cubicle/contract/api';
import {
  endHandoff,
  getHandoff,
  listHandoffs,
  requestHandoff,
  type Deps,
} from '@cubicle/control-plane';
import type { AuthContext } from '@cubicle/tenancy';
import { mintViewerTicket, type TicketDeps } from '@cubicle/viewer';
import type { FastifyInstance } from 'fastify';
import { route } from '../lib/define-handler.js';
import type { ViewerOptions } from '../viewer/viewer-options.js';

/** Handoffs as a service of the app: the REST route and the MCP `request_handoff` tool call it. */
export interface HandoffService {
  /**
   * request hands the claim to a human (requestHandoff) and mints the `control` ticket bound to
   * the handoff, with the caller's key, for as long as the lease (renewals re-check the handoff,
   * and the ticket is revoked when it ends).
   */
  request(auth: AuthContext, claimId: string, body: CreateHandoffRequest): Promise<HandoffCreated>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Handoffs (registered with the viewer, which mints their control tickets). */
    handoffs: HandoffService;
  }
}

/** The control ticket lives as long as a claim could (its handoff's end revokes it earlier). */
const CONTROL_TICKET_TTL_SECONDS = 86_400;

/**
 * registerHandoffRoutes mounts request, list, get and return, and decorates the app with the
 * HandoffService. Registered by the viewer plugin: a handoff's answer carries a viewer ticket.
 */
export function registerHandoffRoutes(
  app: FastifyInstance,
  deps: Deps,
  tickets: TicketDeps,
  options: ViewerOptions,
) {
  const service: HandoffService = {
    async request(auth, claimId, body) {
      const handoff = await requestHandoff(deps, {
        tenantId: auth.tenantId,
        claimId,
        apiKeyId: auth.apiKeyId,
        reason: body.reason,
        for: body.for,
        ttlSeconds: body.ttl_seconds,
      });
      const control = await mintViewerTicket(tickets, {
        tenantId: auth.tenantId,
        apiKeyId: auth.apiKeyId,
        role: auth.role,
        claimId,
        mode: 'control',
        ttlSeconds: CONTROL_TICKET_TTL_SECONDS,
        webUrl: options.webUrl,
        handoffId: handoff.id,
      });
      return { ...handoff, control };
    },
  };
  app.decorate('handoffs', service);

  route(app, Routes.requestHandoff, async ({ auth, params, body, reply }) => {
    // The body holds the only copy of the control ticket: no cache may keep it.
    reply.header('cache-control', 'no-store');
    return { status: 201, body: await service.request(auth, params.id, body) };
  });

  route(app, Routes.listHandoffs, async ({ auth, params, query }) => ({
    status: 200,
    body: await listHandoffs(deps, auth.tenantId, params.id, query),
  }));

  route(app, Routes.getHandoff, async ({ auth, params }) => ({
    status: 200,
    body: await getHandoff(deps, auth.tenantId, params.id, params.handoff_id),
  }));

  route(app, Routes.returnHandoff, async ({ auth, params, body }) => ({
    status: 200,
    body: await endHandoff(
      deps,
      { tenantId: auth.tenantId, claimId: params.id, handoffId: params.handoff_id },
      {
        to: 'returned',
        by: { apiKeyId: auth.apiKeyId, keyPrefix: auth.keyPrefix },
        note: body.note ?? null,
      },
    ),
  }));
}
