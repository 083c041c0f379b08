import {
  ReplayLinkClaims,
  type ListQuery,
  type ReplayLink,
  type ReplayLinkCreated,
  type ReplayLinkState,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, type Db, type ReplayLink as ReplayLinkRow } from '@cubicle/db';
import {
  claimTokenState,
  listClaimTokens,
  requireClaim,
  revokeClaimToken,
} from '../claim-tokens/claim-tokens.js';
import type { ViewerKeys } from '../tickets/viewer-keys.js';
import { replayEmbedHtml } from './replay-embed-html.js';

/**
 * The JOSE `typ` of a replay link's token. The viewer key set signs viewer tickets, MCP tokens and
 * replay links; the typ keeps one kind from passing as another.
 */
export const REPLAY_LINK_TYP = 'cubicle-replay+jwt';

export interface ReplayLinkDeps {
  db: Db;
  keys: ViewerKeys;
  now?: () => Date;
}

const nowOf = (deps: ReplayLinkDeps) => (deps.now ? deps.now() : new Date());

export interface MintReplayLinkInput {
  tenantId: string;
  apiKeyId: string;
  claimId: string;
  ttlSeconds: number;
  /** Base URL of the web app (`CUBICLE_WEB_URL`); the page is `/replay/<token>` there. */
  webUrl: string;
}

function linkView(row: ReplayLinkRow): ReplayLink {
  return {
    id: row.id,
    claim_id: row.claimId,
    expires_at: row.expiresAt.toISOString(),
    revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * mintReplayLink signs a read-only link to a claim's replay, active or ended (a replay is watched
 * after the fact). Only its id and metadata are stored; the token exists in this response alone.
 */
export async function mintReplayLink(
  deps: ReplayLinkDeps,
  input: MintReplayLinkInput,
): Promise<ReplayLinkCreated> {
  await requireClaim(deps.db, input.tenantId, input.claimId);
  const now = nowOf(deps);
  const expiresAt = new Date(now.getTime() + input.ttlSeconds * 1000);
  const id = newId('replay_link');
  const row = await deps.db.replayLink.create({
    data: {
      id,
      tenantId: input.tenantId,
      claimId: input.claimId,
      createdByKeyId: input.apiKeyId,
      expiresAt,
      createdAt: now,
    },
  });
  const claims: ReplayLinkClaims = {
    jti: id,
    tnt: input.tenantId,
    clm: input.claimId,
    iat: Math.floor(now.getTime() / 1000),
    exp: Math.ceil(expiresAt.getTime() / 1000),
  };
  const token = await deps.keys.signAs(REPLAY_LINK_TYP, claims);
  const replayUrl = `${input.webUrl.replace(/\/+$/, '')}/replay/${token}`;
  return { ...linkView(row), token, replay_url: replayUrl, embed_html: replayEmbedHtml(replayUrl) };
}

/** listReplayLinks pages a claim's links newest first; never the tokens. */
export function listReplayLinks(
  deps: ReplayLinkDeps,
  tenantId: string,
  claimId: string,
  query: ListQuery,
) {
  return listClaimTokens(deps.db, deps.db.replayLink, tenantId, claimId, query, linkView);
}

/**
 * revokeReplayLink stops a link (idempotent). Every request re-reads the link's row, so the next
 * one is refused on every replica; nothing needs announcing.
 */
export async function revokeReplayLink(
  deps: ReplayLinkDeps,
  tenantId: string,
  linkId: string,
): Promise<void> {
  await revokeClaimToken(deps.db.replayLink, tenantId, linkId, nowOf(deps), 'replay link');
}

/** ResolvedReplayLink is what a correctly signed replay link stands for now. */
export interface ResolvedReplayLink {
  linkId: string;
  tenantId: string;
  claimId: string;
  state: ReplayLinkState;
  expiresAt: Date;
  embedOrigins: string[];
}

/**
 * resolveReplayLink verifies a token's signature and reads its state from its row. It returns null
 * for anything that is not a replay link we signed and stored (garbage, a bad signature, a viewer
 * ticket or MCP token, a link whose row is gone).
 */
export async function resolveReplayLink(
  deps: ReplayLinkDeps,
  token: string,
): Promise<ResolvedReplayLink | null> {
  const parsed = ReplayLinkClaims.safeParse(await deps.keys.verifyAs(REPLAY_LINK_TYP, token));
  if (!parsed.success) return null;
  const claims = parsed.data;
  const row = await deps.db.replayLink.findUnique({
    where: { id: claims.jti },
    select: {
      tenantId: true,
      claimId: true,
      expiresAt: true,
      revokedAt: true,
      tenant: { select: { allowedEmbedOrigins: true } },
    },
  });
  if (!row || row.tenantId !== claims.tnt || row.claimId !== claims.clm) return null;
  // A replay outlives its claim: the claim's end does not end the link.
  const state = claimTokenState(
    { isEnded: false, isRevoked: row.revokedAt !== null, expiresAt: row.expiresAt },
    nowOf(deps),
  ) as ReplayLinkState;
  return {
    linkId: claims.jti,
    tenantId: row.tenantId,
    claimId: row.claimId,
    state,
    expiresAt: row.expiresAt,
    embedOrigins: row.tenant.allowedEmbedOrigins,
  };
}

/**
 * authorizeReplayRead checks that a resolved link may read this claim now: 401 `unauthenticated`
 * (with `details.state`) once expired or revoked, 404 for another claim (a link names one claim,
 * and another claim's existence is not its business).
 */
export function authorizeReplayRead(link: ResolvedReplayLink, claimId: string): void {
  if (link.state !== 'active')
    throw new AppError('unauthenticated', `the replay link is ${link.state}`, {
      state: link.state,
    });
  if (link.claimId !== claimId) throw new AppError('not_found', `claim ${claimId} not found`);
}
