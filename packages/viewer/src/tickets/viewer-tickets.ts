import type {
  ApiKeyRole,
  ListQuery,
  ViewerMode,
  ViewerTicket,
  ViewerTicketCreated,
  ViewerTicketState,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { isClaimLive, publishViewerRevocation, type ViewerEvents } from '@cubicle/control-plane';
import { newId, type Db, type ViewerTicket as ViewerTicketRow } from '@cubicle/db';
import { embedHtml } from './embed-html.js';
import {
  claimTokenState,
  listClaimTokens,
  revokeClaimToken,
} from '../claim-tokens/claim-tokens.js';
import type { ViewerKeys } from './viewer-keys.js';

export interface TicketDeps {
  db: Db;
  keys: ViewerKeys;
  /** Where revocations are announced so every API process closes its streams. */
  events?: ViewerEvents;
  now?: () => Date;
}

const nowOf = (deps: TicketDeps) => (deps.now ? deps.now() : new Date());

/**
 * Roles that may mint `control` tickets (drive the desktop through the viewer). Both roles today
 * may; a future read-only role would mint `view` only.
 */
const CONTROL_ROLES: ReadonlySet<ApiKeyRole> = new Set<ApiKeyRole>(['admin', 'member']);

export interface MintInput {
  tenantId: string;
  apiKeyId: string;
  role: ApiKeyRole;
  claimId: string;
  mode: ViewerMode;
  ttlSeconds: number;
  /** Base URL of the web app (`CUBICLE_WEB_URL`); the viewer page is `/embed/<ticket>` there. */
  webUrl: string;
  /** A `control` ticket bound to this active handoff of the claim (requestHandoff made it). */
  handoffId?: string | undefined;
}

function ticketView(row: ViewerTicketRow): ViewerTicket {
  return {
    id: row.id,
    claim_id: row.claimId,
    mode: row.mode,
    handoff_id: row.handoffId,
    expires_at: row.expiresAt.toISOString(),
    revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * mintViewerTicket signs a ticket for an active claim of the caller's tenant. Only the ticket's
 * id and metadata are stored: the signed string exists in this response alone. The ticket
 * expires after `ttlSeconds`, but never after the claim's hard maximum lifetime. A ticket with
 * `handoffId` is bound to that active handoff of the claim (409 `conflict` for one that has
 * ended) and revoked when it ends; only a `control` one drives. While a handoff is active, a
 * `control` ticket without it is 409 `handoff_active` (the human holds the desktop, nobody else
 * drives it).
 */
export async function mintViewerTicket(
  deps: TicketDeps,
  input: MintInput,
): Promise<ViewerTicketCreated> {
  if (input.mode === 'control' && !CONTROL_ROLES.has(input.role))
    throw new AppError('forbidden', 'this key may mint view tickets only');
  const claim = await deps.db.claim.findFirst({
    where: { id: input.claimId, tenantId: input.tenantId },
    select: { status: true, sandboxId: true, expiresAt: true, maxExpiresAt: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${input.claimId} not found`);
  const now = nowOf(deps);
  if (!isClaimLive(claim, now) || !claim.sandboxId)
    throw new AppError('claim_not_active', 'viewer tickets need an active claim');
  if (input.mode === 'control' || input.handoffId) await checkHandoffBinding(deps.db, input);
  const expiresAt = new Date(
    Math.min(now.getTime() + input.ttlSeconds * 1000, claim.maxExpiresAt.getTime()),
  );
  const id = newId('viewer_ticket');
  const row = await deps.db.viewerTicket.create({
    data: {
      id,
      tenantId: input.tenantId,
      claimId: input.claimId,
      sandboxId: claim.sandboxId,
      mode: input.mode,
      createdByKeyId: input.apiKeyId,
      handoffId: input.handoffId ?? null,
      expiresAt,
      createdAt: now,
    },
  });
  const ticket = await deps.keys.sign({
    jti: id,
    tnt: input.tenantId,
    clm: input.claimId,
    sbx: claim.sandboxId,
    mode: input.mode,
    ...(input.handoffId ? { hof: input.handoffId } : {}),
    iat: Math.floor(now.getTime() / 1000),
    exp: Math.ceil(expiresAt.getTime() / 1000),
  });
  const viewerUrl = `${input.webUrl.replace(/\/+$/, '')}/embed/${ticket}`;
  return {
    ...ticketView(row),
    ticket,
    viewer_url: viewerUrl,
    embed_html: embedHtml(viewerUrl, input.mode),
  };
}

/**
 * checkHandoffBinding lets a ticket be minted only as the claim's handoff allows: bound to its
 * active handoff, or (a control ticket) unbound while none is active.
 */
async function checkHandoffBinding(db: Db, input: MintInput): Promise<void> {
  const active = await db.handoff.findFirst({
    where: { claimId: input.claimId, tenantId: input.tenantId, state: 'active' },
    select: { id: true },
  });
  if (!input.handoffId) {
    if (active && input.mode === 'control')
      throw new AppError(
        'handoff_active',
        `a human holds this desktop (handoff ${active.id}): mint its control ticket with handoff_id`,
        { handoff_id: active.id },
      );
    return;
  }
  if (active?.id === input.handoffId) return;
  const known = await db.handoff.count({
    where: { id: input.handoffId, claimId: input.claimId, tenantId: input.tenantId },
  });
  if (known === 0) throw new AppError('not_found', `handoff ${input.handoffId} not found`);
  throw new AppError('conflict', `handoff ${input.handoffId} has ended`);
}

/** listViewerTickets pages a claim's tickets newest first (ids sort by time); never the strings. */
export function listViewerTickets(
  deps: TicketDeps,
  tenantId: string,
  claimId: string,
  query: ListQuery,
) {
  return listClaimTokens(deps.db, deps.db.viewerTicket, tenantId, claimId, query, ticketView);
}

/**
 * revokeViewerTicket stops a ticket (idempotent: revoking twice is fine) and tells every API
 * process to close its open streams. Another tenant's ticket is not_found.
 */
export async function revokeViewerTicket(
  deps: TicketDeps,
  tenantId: string,
  ticketId: string,
): Promise<void> {
  const revoked = await revokeClaimToken(
    deps.db.viewerTicket,
    tenantId,
    ticketId,
    nowOf(deps),
    'viewer ticket',
  );
  if (revoked) await publishViewerRevocation(deps.events, { kind: 'ticket', ticket_id: ticketId });
}

/** ResolvedTicket is what a correctly signed ticket stands for now. */
export interface ResolvedTicket {
  ticketId: string;
  tenantId: string;
  claimId: string;
  sandboxId: string;
  mode: ViewerMode;
  state: ViewerTicketState;
  expiresAt: Date;
  /** The handoff a control ticket is bound to, with its lease (null for other tickets). */
  handoff: { id: string; ttlSeconds: number; createdByKeyId: string | null } | null;
  embedOrigins: string[];
  /** `host:port` of the sandbox's VNC server, when it has one. */
  vncEndpoint: string | null;
}

/**
 * resolveViewerTicket verifies a ticket's signature and reads its current state: `ended` when
 * its claim was released, else `revoked`, else `expired`, else `active`. It returns null for
 * anything that is not a ticket we signed and stored (garbage, bad signature, unknown key id,
 * a ticket whose row is gone): callers answer those with 401 invalid_ticket.
 */
export async function resolveViewerTicket(
  deps: TicketDeps,
  ticket: string,
): Promise<ResolvedTicket | null> {
  const claims = await deps.keys.verify(ticket);
  if (!claims) return null;
  const row = await deps.db.viewerTicket.findUnique({
    where: { id: claims.jti },
    select: {
      tenantId: true,
      claimId: true,
      sandboxId: true,
      mode: true,
      expiresAt: true,
      revokedAt: true,
      createdByKeyId: true,
      handoff: { select: { id: true, state: true, ttlSeconds: true } },
      claim: { select: { status: true } },
      tenant: { select: { allowedEmbedOrigins: true } },
      sandbox: { select: { vncEndpoint: true } },
    },
  });
  if (
    !row ||
    row.tenantId !== claims.tnt ||
    row.claimId !== claims.clm ||
    row.mode !== claims.mode ||
    (row.handoff?.id ?? undefined) !== claims.hof
  )
    return null;
  // A handoff's ticket is revoked when the handoff ends; an ended handoff revokes it regardless.
  const state = claimTokenState(
    {
      isEnded: row.claim.status === 'released',
      isRevoked: Boolean(row.revokedAt || (row.handoff && row.handoff.state !== 'active')),
      expiresAt: row.expiresAt,
    },
    nowOf(deps),
  );
  return {
    ticketId: claims.jti,
    tenantId: row.tenantId,
    claimId: row.claimId,
    sandboxId: row.sandboxId,
    mode: row.mode,
    state,
    expiresAt: row.expiresAt,
    handoff: row.handoff
      ? {
          id: row.handoff.id,
          ttlSeconds: row.handoff.ttlSeconds,
          createdByKeyId: row.createdByKeyId,
        }
      : null,
    embedOrigins: row.tenant.allowedEmbedOrigins,
    vncEndpoint: row.sandbox.vncEndpoint,
  };
}
