import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, listQueryOf, McpTokenId } from '../common.js';
import { CreateMcpTokenRequest, McpToken, McpTokenCreated } from '../mcp-token.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

/**
 * MCP tokens: claim-scoped bearer tokens for the claim's MCP endpoint, so an agent platform
 * drives one desktop without holding the tenant's API key. Minted, listed and revoked like
 * viewer tickets.
 */
export const mcpTokenRoutes = {
  createMcpToken: defineRoute({
    operationId: 'createMcpToken',
    method: 'POST',
    path: claimChild('mcp-tokens'),
    tag: 'mcp',
    auth: 'api_key',
    summary: "Mint an expiring token for the claim's MCP endpoint",
    description:
      'The token is signed and shown once; only its id is stored. Give it to an MCP client as `Authorization: Bearer <token>` for `mcp_url` (Streamable HTTP, `POST /v1/claims/{id}/mcp`; stateless, JSON answers). It drives this claim only, lists and calls only `tools` (all when omitted), and stops working at `expires_at`, on revocation, or when the claim ends. Tenant API keys work on the same endpoint. Tool failures are JSON-RPC errors whose `data.code` is the error code the REST call would answer.',
    params: ClaimPathParams,
    body: CreateMcpTokenRequest,
    responses: { 201: McpTokenCreated },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  listMcpTokens: defineRoute({
    operationId: 'listMcpTokens',
    method: 'GET',
    path: claimChild('mcp-tokens'),
    tag: 'mcp',
    auth: 'api_key',
    summary: "List a claim's MCP tokens (never the token strings)",
    params: ClaimPathParams,
    query: listQueryOf(McpTokenId),
    responses: { 200: listOf(McpToken) },
    errors: [...readErrors],
  }),
  revokeMcpToken: defineRoute({
    operationId: 'revokeMcpToken',
    method: 'DELETE',
    path: '/v1/mcp-tokens/{token_id}',
    tag: 'mcp',
    auth: 'api_key',
    summary: 'Revoke an MCP token (idempotent); its next request is refused',
    params: z.strictObject({ token_id: McpTokenId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;
