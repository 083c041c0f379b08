import type { McpToolName } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { GuestCalls } from '@cubicle/control-plane';
import { resolveMcpToken, type McpTokenDeps } from '@cubicle/viewer';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticate } from '../auth/authenticate.js';
import type { McpCaller } from './mcp-server.js';

const BEARER = /^Bearer +([^\s]+) *$/i;
/** An MCP token is a compact JWS (three base64url parts); an API key (`cbk_…`) has no dot. */
const JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface McpAuthDeps {
  tokens: McpTokenDeps;
  authenticate: Authenticate;
  guest: GuestCalls;
}

function unauthenticated(reply: FastifyReply, message: string, details?: Record<string, unknown>) {
  reply.header('www-authenticate', 'Bearer');
  return new AppError('unauthenticated', message, details);
}

/**
 * authenticateMcp decides who calls the claim's MCP endpoint, before any MCP message is read:
 * an MCP token (for this claim only, while active: not expired, revoked, or of an ended claim)
 * or a tenant API key (the same authenticator, rate limit and 401 as every route). A key's claim
 * is checked as a drive call checks it (another tenant's claim is 404, an ended one 409) unless
 * every message is a tools/call, whose guest call makes exactly that check anyway.
 */
export async function authenticateMcp(
  deps: McpAuthDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  claimId: string,
  isToolCallOnly: boolean,
): Promise<McpCaller> {
  const header = request.headers.authorization;
  const bearer = header ? BEARER.exec(header)?.[1] : undefined;
  if (bearer && JWS.test(bearer)) {
    const token = await resolveMcpToken(deps.tokens, bearer);
    if (!token) throw unauthenticated(reply, 'not a valid MCP token');
    if (token.state !== 'active')
      throw unauthenticated(reply, `the MCP token is ${token.state}`, { state: token.state });
    if (token.claimId !== claimId)
      throw new AppError('forbidden', 'this MCP token is for another claim');
    request.log = request.log.child({ tenant_id: token.tenantId, mcp_token_id: token.tokenId });
    return {
      tenantId: token.tenantId,
      claimId,
      tools: token.tools ? new Set<McpToolName>(token.tools) : null,
      // The token acts for the key that minted it; every key role may drive and hand off.
      actor: {
        tenantId: token.tenantId,
        apiKeyId: token.createdByKeyId ?? token.tokenId,
        role: 'member',
        keyPrefix: 'mcp-token',
        requestsPerMinute: 0,
      },
    };
  }
  const auth = await deps.authenticate(request, reply, 'api_key');
  if (!isToolCallOnly) await deps.guest.activeSandboxOf(auth.tenantId, claimId);
  return { tenantId: auth.tenantId, claimId, tools: null, actor: auth };
}
