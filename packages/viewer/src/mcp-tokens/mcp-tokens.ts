import {
  McpTokenClaims,
  type ListQuery,
  type McpToken,
  type McpTokenCreated,
  type McpToolName,
  type ViewerTicketState,
} from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { isClaimLive } from '@cubicle/control-plane';
import { newId, type Db, type McpToken as McpTokenRow } from '@cubicle/db';
import {
  claimTokenState,
  listClaimTokens,
  revokeClaimToken,
} from '../claim-tokens/claim-tokens.js';
import type { ViewerKeys } from '../tickets/viewer-keys.js';

/**
 * The JOSE `typ` of an MCP token. The viewer key set signs both kinds; the typ keeps a viewer
 * ticket from passing as an MCP token and the other way round.
 */
export const MCP_TOKEN_TYP = 'cubicle-mcp+jwt';

export interface McpTokenDeps {
  db: Db;
  keys: ViewerKeys;
  now?: () => Date;
}

const nowOf = (deps: McpTokenDeps) => (deps.now ? deps.now() : new Date());

export interface MintMcpTokenInput {
  tenantId: string;
  apiKeyId: string;
  claimId: string;
  ttlSeconds: number;
  /** Undefined: every tool. */
  tools: McpToolName[] | undefined;
  /** The claim's MCP endpoint, as the caller reached this API. */
  mcpUrl: string;
}

function tokenView(row: McpTokenRow): McpToken {
  return {
    id: row.id,
    claim_id: row.claimId,
    tools: row.tools.length > 0 ? (row.tools as McpToolName[]) : null,
    expires_at: row.expiresAt.toISOString(),
    revoked_at: row.revokedAt ? row.revokedAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * mintMcpToken signs a token for an active claim of the caller's tenant. Only its id and metadata
 * are stored; the signed string exists in this response alone. It expires after `ttlSeconds`,
 * but never after the claim's hard maximum lifetime.
 */
export async function mintMcpToken(
  deps: McpTokenDeps,
  input: MintMcpTokenInput,
): Promise<McpTokenCreated> {
  const claim = await deps.db.claim.findFirst({
    where: { id: input.claimId, tenantId: input.tenantId },
    select: { status: true, sandboxId: true, expiresAt: true, maxExpiresAt: true },
  });
  if (!claim) throw new AppError('not_found', `claim ${input.claimId} not found`);
  const now = nowOf(deps);
  if (!isClaimLive(claim, now) || !claim.sandboxId)
    throw new AppError('claim_not_active', 'MCP tokens need an active claim');
  const expiresAt = new Date(
    Math.min(now.getTime() + input.ttlSeconds * 1000, claim.maxExpiresAt.getTime()),
  );
  const id = newId('mcp_token');
  const row = await deps.db.mcpToken.create({
    data: {
      id,
      tenantId: input.tenantId,
      claimId: input.claimId,
      tools: input.tools ? [...new Set(input.tools)] : [],
      createdByKeyId: input.apiKeyId,
      expiresAt,
      createdAt: now,
    },
  });
  const claims: McpTokenClaims = {
    jti: id,
    tnt: input.tenantId,
    clm: input.claimId,
    iat: Math.floor(now.getTime() / 1000),
    exp: Math.ceil(expiresAt.getTime() / 1000),
  };
  const token = await deps.keys.signAs(MCP_TOKEN_TYP, claims);
  return { ...tokenView(row), token, mcp_url: input.mcpUrl };
}

/** listMcpTokens pages a claim's tokens newest first (ids sort by time); never the strings. */
export function listMcpTokens(
  deps: McpTokenDeps,
  tenantId: string,
  claimId: string,
  query: ListQuery,
) {
  return listClaimTokens(deps.db, deps.db.mcpToken, tenantId, claimId, query, tokenView);
}

/**
 * revokeMcpToken stops a token (idempotent). Every request re-reads the token's row, so the
 * next request with it is refused on every replica; nothing needs announcing. Another tenant's
 * token is not_found.
 */
export async function revokeMcpToken(
  deps: McpTokenDeps,
  tenantId: string,
  tokenId: string,
): Promise<void> {
  await revokeClaimToken(deps.db.mcpToken, tenantId, tokenId, nowOf(deps), 'MCP token');
}

/** ResolvedMcpToken is what a correctly signed MCP token stands for now. */
export interface ResolvedMcpToken {
  tokenId: string;
  tenantId: string;
  claimId: string;
  /** Null: every tool. */
  tools: McpToolName[] | null;
  /** `ended` when its claim ended, else `revoked`, else `expired`, else `active`. */
  state: ViewerTicketState;
  createdByKeyId: string | null;
}

/**
 * resolveMcpToken verifies a token's signature and reads its current state from its row. It
 * returns null for anything that is not a token we signed and stored (garbage, a bad signature,
 * a viewer ticket, a token whose row is gone).
 */
export async function resolveMcpToken(
  deps: McpTokenDeps,
  token: string,
): Promise<ResolvedMcpToken | null> {
  const parsed = McpTokenClaims.safeParse(await deps.keys.verifyAs(MCP_TOKEN_TYP, token));
  if (!parsed.success) return null;
  const claims = parsed.data;
  const row = await deps.db.mcpToken.findUnique({
    where: { id: claims.jti },
    select: {
      tenantId: true,
      claimId: true,
      tools: true,
      expiresAt: true,
      revokedAt: true,
      createdByKeyId: true,
      claim: { select: { status: true } },
    },
  });
  if (!row || row.tenantId !== claims.tnt || row.claimId !== claims.clm) return null;
  const state = claimTokenState(
    {
      isEnded: row.claim.status === 'released',
      isRevoked: row.revokedAt !== null,
      expiresAt: row.expiresAt,
    },
    nowOf(deps),
  );
  return {
    tokenId: claims.jti,
    tenantId: row.tenantId,
    claimId: row.claimId,
    tools: row.tools.length > 0 ? (row.tools as McpToolName[]) : null,
    state,
    createdByKeyId: row.createdByKeyId,
  };
}
