import { Routes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import {
  listViewerTickets,
  mintViewerTicket,
  resolveViewerTicket,
  revokeViewerTicket,
  type TicketDeps,
} from '@cubicle/viewer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { route } from '../lib/define-handler.js';
import type { ViewerOptions } from '../viewer/viewer-options.js';

/**
 * streamUrlOf is the absolute WebSocket URL of the stream for a ticket: from the configured
 * public API URL, else from the request's own scheme and Host (what the browser used).
 */
export function streamUrlOf(request: FastifyRequest, options: ViewerOptions, ticket: string) {
  const base = options.publicApiUrl
    ? options.publicApiUrl.replace(/\/+$/, '').replace(/^http/, 'ws')
    : `${request.protocol === 'https' ? 'wss' : 'ws'}://${request.host}`;
  return `${base}/v1/viewer/stream?ticket=${encodeURIComponent(ticket)}`;
}

/** Viewer ticket routes: mint, list and revoke with an API key; introspect with the ticket itself. */
export function registerViewerTicketRoutes(
  app: FastifyInstance,
  deps: TicketDeps,
  options: ViewerOptions,
) {
  route(app, Routes.createViewerTicket, async ({ auth, params, body, reply }) => {
    // The body holds the only copy of the ticket: no cache may keep it.
    reply.header('cache-control', 'no-store');
    const created = await mintViewerTicket(deps, {
      tenantId: auth.tenantId,
      apiKeyId: auth.apiKeyId,
      role: auth.role,
      claimId: params.id,
      mode: body.mode,
      ttlSeconds: body.ttl_seconds,
      webUrl: options.webUrl,
      handoffId: body.handoff_id,
    });
    return { status: 201, body: created };
  });

  route(app, Routes.listViewerTickets, async ({ auth, params, query }) => ({
    status: 200,
    body: await listViewerTickets(deps, auth.tenantId, params.id, query),
  }));

  route(app, Routes.revokeViewerTicket, async ({ auth, params }) => {
    await revokeViewerTicket(deps, auth.tenantId, params.ticket_id);
    return { status: 204, body: null };
  });

  route(app, Routes.introspectViewerTicket, async ({ body, request, reply }) => {
    reply.header('cache-control', 'no-store');
    const resolved = await resolveViewerTicket(deps, body.ticket);
    if (!resolved) throw new AppError('invalid_ticket', 'not a valid viewer ticket');
    return {
      status: 200,
      body: {
        state: resolved.state,
        mode: resolved.mode,
        claim_id: resolved.claimId,
        handoff_id: resolved.handoff?.id ?? null,
        expires_at: resolved.expiresAt.toISOString(),
        embed_origins: resolved.embedOrigins,
        stream_url: streamUrlOf(request, options, body.ticket),
      },
    };
  });
}
