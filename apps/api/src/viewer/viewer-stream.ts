import { SocketRoutes, toFastifyPath, ViewerCloseCodes } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import {
  recordViewerConnected,
  recordViewerDisconnected,
  renewHandoffLease,
  type Deps,
  type Keyring,
} from '@cubicle/control-plane';
import {
  bridgeRfb,
  resolveViewerTicket,
  type LiveStream,
  type LiveStreams,
  type RfbBridge,
  type LeaseResult,
  type ResolvedTicket,
  type StreamLeases,
  type TicketDeps,
  vncPreambleForSandbox,
} from '@cubicle/viewer';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const resolvedOf = new WeakMap<FastifyRequest, ResolvedTicket>();
const leaseOf = new WeakMap<FastifyRequest, LeaseResult>();
const preambleOf = new WeakMap<FastifyRequest, Buffer>();
const { streamViewer } = SocketRoutes;

/**
 * registerViewerStream mounts the contract's `streamViewer`, `GET /v1/viewer/stream?ticket=…`
 * (WebSocket, subprotocol `binary`). The ticket is checked before the upgrade: a bad, expired or
 * revoked ticket, or one of an ended claim, is a plain 401 `invalid_ticket` and no socket is
 * ever accepted. After the upgrade the stream is admitted against the viewer limits and bridged to the sandbox's VNC.
 * With `leases` the limits hold across every API replica: the slot is taken in Redis before
 * the upgrade (the only asynchronous point), and refused or admitted after it.
 */
export function registerViewerStream(
  app: FastifyInstance,
  deps: TicketDeps,
  streams: LiveStreams,
  options: {
    highWaterBytes?: number;
    leases?: StreamLeases;
    /** Opens the sandbox's guest token for the VNC credential the bridge sends first. */
    keyring?: Keyring;
    /** Renews a handoff's lease from the input of its control streams (renewHandoffLease). */
    handoffs?: Deps;
    /** Resumes a paused claim before its stream is bridged (resumeBeforeViewing). */
    resume?: (tenantId: string, claimId: string) => Promise<void>;
  } = {},
) {
  app.route({
    method: 'GET',
    url: toFastifyPath(streamViewer.path),
    preValidation: async (request) => {
      // Any refusal of the ticket, a malformed one included, is `invalid_ticket` (not socketRoute's
      // `validation_failed`): a viewer page shows one message for every ticket it cannot use.
      const query = streamViewer.query.safeParse(request.query);
      if (!query.success) throw new AppError('invalid_ticket', 'a viewer ticket is required');
      const resolved = await resolveViewerTicket(deps, query.data.ticket);
      if (!resolved) throw new AppError('invalid_ticket', 'not a valid viewer ticket');
      if (resolved.state !== 'active')
        throw new AppError('invalid_ticket', `the viewer ticket is ${resolved.state}`, {
          state: resolved.state,
        });
      if (!resolved.vncEndpoint)
        throw new AppError('backend_unavailable', 'this sandbox has no VNC server');
      // A paused desktop's VNC server is frozen with it: resume it before the bridge.
      await options.resume?.(resolved.tenantId, resolved.claimId);
      resolvedOf.set(request, resolved);
      const preamble = options.keyring
        ? await vncPreambleForSandbox(deps.db, options.keyring, resolved.sandboxId)
        : null;
      if (preamble) preambleOf.set(request, preamble);
      if (options.leases)
        leaseOf.set(request, await options.leases.reserve(resolved.ticketId, resolved.tenantId));
    },
    handler: async (request) => {
      const lease = leaseOf.get(request);
      if (lease?.admitted) lease.release();
      throw new AppError('validation_failed', 'this endpoint only speaks WebSocket');
    },
    wsHandler: (socket, request) => {
      // Synchronous up to bridgeRfb, which attaches the message listener: nothing is missed.
      const ticket = resolvedOf.get(request)!;
      const stream: LiveStream = {
        ticketId: ticket.ticketId,
        claimId: ticket.claimId,
        tenantId: ticket.tenantId,
        // Only called once admitted, after `bridge` below exists.
        close: (reason) => bridge.close(reason),
      };
      const lease = leaseOf.get(request);
      const admitted = lease && !lease.admitted ? lease.limit : streams.admit(stream);
      const log = request.log.child({ ticket_id: ticket.ticketId, claim_id: ticket.claimId });
      if (admitted !== 'ok') {
        if (lease?.admitted) lease.release();
        log.warn({ limit: admitted }, 'viewer refused: limit reached');
        socket.close(
          ViewerCloseCodes.limit,
          admitted === 'ticket_limit' ? 'too many viewers on this ticket' : 'too many viewers',
        );
        return;
      }
      // The connection is a fact for the claim's timeline, written beside the stream and never
      // awaited before it: a slow database must not delay the picture, nor a failed write end it.
      const connection = recordViewerConnected(deps.db, {
        tenantId: ticket.tenantId,
        claimId: ticket.claimId,
        ticketId: ticket.ticketId,
        mode: ticket.mode,
      }).catch((err: unknown) => {
        log.warn({ err }, 'viewer connection not recorded');
        return null;
      });
      const bridge: RfbBridge = bridgeRfb({
        ws: socket,
        upstream: ticket.vncEndpoint!,
        mode: ticket.mode,
        expiresAt: ticket.expiresAt,
        ...(options.highWaterBytes ? { highWaterBytes: options.highWaterBytes } : {}),
        ...(preambleOf.has(request) ? { preamble: preambleOf.get(request)! } : {}),
        ...(ticket.handoff && ticket.mode === 'control' && options.handoffs
          ? { handoff: { onInput: leaseRenewer(options.handoffs, ticket, () => bridge, log) } }
          : {}),
        onClosed: (info) => {
          streams.release(stream);
          if (lease?.admitted) lease.release();
          log.info(info, 'viewer stream closed');
          void connection
            .then(async (id) => {
              if (id) await recordViewerDisconnected(deps.db, id, info.reason);
            })
            .catch((err: unknown) => log.warn({ err }, 'viewer disconnection not recorded'));
        },
      });
      log.info({ mode: ticket.mode }, 'viewer stream opened');
      // A revocation published between the check above and admit() reached no stream: look again.
      void resolveViewerTicket(deps, String((request.query as { ticket: string }).ticket))
        .then((now) => {
          if (!now || now.state !== 'active')
            bridge.close(
              now?.state === 'ended' ? 'ended' : now?.state === 'expired' ? 'expired' : 'revoked',
            );
        })
        .catch(() => undefined);
    },
  });
}

/** A lease is renewed at most this often, and at least four times per lease. */
const RENEW_EVERY_MS = 5_000;

/**
 * leaseRenewer turns a handoff's control stream's input into lease renewals: the first input at
 * once (it marks who took over), then at most every few seconds while input keeps coming. A
 * renewal that finds the handoff ended stops the stream's input and closes it (4004); a failed
 * write is logged and retried with the next input.
 */
function leaseRenewer(
  deps: Deps,
  ticket: ResolvedTicket,
  bridgeOf: () => RfbBridge,
  log: FastifyRequest['log'],
): () => void {
  const handoff = ticket.handoff!;
  const everyMs = Math.min(RENEW_EVERY_MS, (handoff.ttlSeconds * 1000) / 4);
  let lastAt = 0;
  let isRenewing = false;
  return () => {
    const now = Date.now();
    if (isRenewing || now - lastAt < everyMs) return;
    isRenewing = true;
    lastAt = now;
    renewHandoffLease(deps, { handoffId: handoff.id, ticketKeyId: handoff.createdByKeyId })
      .then((renewed) => {
        if (renewed.isActive) return;
        const bridge = bridgeOf();
        bridge.stopInput();
        bridge.close('handoff_ended');
      })
      .catch((err: unknown) => {
        lastAt = 0;
        log.warn({ err, handoff_id: handoff.id }, 'handoff lease not renewed');
      })
      .finally(() => {
        isRenewing = false;
      });
  };
}
