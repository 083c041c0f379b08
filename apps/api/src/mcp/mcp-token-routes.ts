import { Routes } from '@cubicle/contract/api';
import { listMcpTokens, mintMcpToken, revokeMcpToken, type McpTokenDeps } from '@cubicle/viewer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { route } from '../lib/define-handler.js';

/**
 * mcpUrlOf is the claim's MCP endpoint as a client should reach it: under the configured public
 * API URL, else the scheme and Host this request came in with.
 */
export function mcpUrlOf(
  request: FastifyRequest,
  publicApiUrl: string | undefined,
  claimId: string,
) {
  const base = publicApiUrl
    ? publicApiUrl.replace(/\/+$/, '')
    : `${request.protocol}://${request.host}`;
  return `${base}/v1/claims/${claimId}/mcp`;
}

/** MCP token routes: mint, list and revoke with an API key, like viewer tickets. */
export function registerMcpTokenRoutes(
  app: FastifyInstance,
  deps: McpTokenDeps,
  publicApiUrl: string | undefined,
) {
  route(app, Routes.createMcpToken, async ({ auth, params, body, request, reply }) => {
    // The body holds the only copy of the token: no cache may keep it.
    reply.header('cache-control', 'no-store');
    const created = await mintMcpToken(deps, {
      tenantId: auth.tenantId,
      apiKeyId: auth.apiKeyId,
      claimId: params.id,
      ttlSeconds: body.ttl_seconds,
      tools: body.tools,
      mcpUrl: mcpUrlOf(request, publicApiUrl, params.id),
    });
    return { status: 201, body: created };
  });

  route(app, Routes.listMcpTokens, async ({ auth, params, query }) => ({
    status: 200,
    body: await listMcpTokens(deps, auth.tenantId, params.id, query),
  }));

  route(app, Routes.revokeMcpToken, async ({ auth, params }) => {
    await revokeMcpToken(deps, auth.tenantId, params.token_id);
    return { status: 204, body: null };
  });
}
