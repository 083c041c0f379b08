import { ClaimPathParams, type CreateHandoffRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { GUEST_MAX_BODY_BYTES, type GuestOperation } from '@cubicle/contract/guest';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { ViewerKeys } from '@cubicle/viewer';
import type { FastifyRequest } from 'fastify';
import { parsePart } from '../lib/define-handler.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { authenticateMcp } from './mcp-auth.js';
import { authInfoOf, McpServerPool } from './mcp-server.js';
import { registerMcpTokenRoutes } from './mcp-token-routes.js';

export interface McpPluginOptions {
  /** The viewer key set: it signs MCP tokens too (under their own JOSE typ). */
  keys: ViewerKeys;
  /** Public URL of this API, for `mcp_url`; default: the scheme and Host of the request. */
  publicApiUrl?: string | undefined;
}

/** The claim's MCP endpoint (Streamable HTTP); `:id` is the claim. */
export const MCP_PATH = '/v1/claims/:id/mcp';

/** isToolCallsOnly: every JSON-RPC message of the body is a tools/call (a batch is an array). */
function isToolCallsOnly(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.every(
    (m) =>
      typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call',
  );
}

/**
 * webRequestOf is the request as the SDK's web-standard transport reads it: method and headers
 * (the body is handed over parsed). The URL is not read, so no Host is trusted to build it.
 */
function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(`http://localhost${request.url}`, { method: request.method, headers });
}

/**
 * mcpPlugin serves one MCP endpoint per claim, with the official SDK's server and (web-standard)
 * Streamable HTTP transport, in stateless mode with JSON answers: each POST gets a transport of
 * its own and a pooled server that keeps nothing of it, answers, and is gone. No session lives in a process, so any replica answers any request and a
 * restart loses nothing; every request carries the claim and a credential, checked before the
 * SDK reads it. Tools run through the drive routes' GuestCalls (same lanes, same checks, same
 * stored ActionResults). GET (a server-to-client event stream) and DELETE (ending a session) have
 * nothing to serve without sessions: 405, as the transport specification allows.
 */
export const mcpPlugin = routeGroup<McpPluginOptions>(
  Plugin.mcp,
  (app, options) => {
    const guest = app.guestCalls;
    if (!guest) throw new Error('the MCP endpoint needs the drive routes (GuestCalls)');
    const authenticate = app.cubicleAuthenticate;
    if (!authenticate) throw new Error('the MCP endpoint needs the identity plugin');
    const tokens = { db: app.connections.db, keys: options.keys };
    registerMcpTokenRoutes(app, tokens, options.publicApiUrl);
    const servers = new McpServerPool();

    app.route({
      method: 'POST',
      url: MCP_PATH,
      // The largest tool arguments are a file write's: the same bound as POST /files/write.
      bodyLimit: GUEST_MAX_BODY_BYTES,
      handler: async (request, reply) => {
        const { id: claimId } = parsePart(ClaimPathParams, request.params, 'path') as {
          id: string;
        };
        const caller = await authenticateMcp(
          { tokens, authenticate, guest },
          request,
          reply,
          claimId,
          isToolCallsOnly(request.body),
        );
        const context = {
          caller,
          call: (operation: GuestOperation, body: Record<string, unknown>) =>
            guest.call(caller.tenantId, caller.claimId, operation, body),
          requestHandoff: (body: CreateHandoffRequest) =>
            app.handoffs.request(caller.actor, caller.claimId, body),
          requestId: request.id,
          log: request.log,
        };
        const server = servers.acquire();
        try {
          const transport = new WebStandardStreamableHTTPServerTransport({
            sessionIdGenerator: undefined,
            enableJsonResponse: true,
          });
          await server.connect(transport);
          const answer = await transport.handleRequest(webRequestOf(request), {
            parsedBody: request.body,
            authInfo: authInfoOf(context),
          });
          // JSON answers (enableJsonResponse): the whole body is ready, nothing streams.
          const body = Buffer.from(await answer.arrayBuffer());
          reply.status(answer.status);
          answer.headers.forEach((value, name) => void reply.header(name, value));
          return await reply.send(body.length > 0 ? body : undefined);
        } finally {
          servers
            .release(server)
            .catch((err: unknown) => request.log.warn({ err }, 'MCP server not released'));
        }
      },
    });

    app.route({
      method: ['GET', 'DELETE'],
      url: MCP_PATH,
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        throw new AppError(
          'method_not_allowed',
          'the MCP endpoint is stateless: POST JSON-RPC messages; there is no event stream or session',
        );
      },
    });
  },
  // The viewer plugin serves handoffs (their answer carries a control ticket).
  [Plugin.driveRoutes, Plugin.viewer],
);
