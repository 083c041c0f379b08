import { CUBICLE_VERSION, type McpToolName } from '@cubicle/contract/api';
import { AppError, zodIssues } from '@cubicle/contract/errors';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import { toToolCallError } from './mcp-errors.js';
import { McpTools, toolNamed, type McpTool } from './mcp-tools.js';
import type { GuestCall } from './wait-for.js';

/** McpCaller is who is calling the claim's MCP endpoint, and what they may use. */
export interface McpCaller {
  tenantId: string;
  claimId: string;
  /** The tools an MCP token was limited to; null (a tenant API key, an unlimited token): all. */
  tools: ReadonlySet<McpToolName> | null;
}

const INSTRUCTIONS =
  'Drive one claimed Linux desktop. observe a window for its elements and their element tokens, act on an element by token (every action answers an ActionResult: effect confirmed / unverifiable / suspected_noop / refused, with evidence and retry_safe), verify or wait_for a state, and fall back to screenshot + input at pixels when the accessibility tree has no element.';

/**
 * createMcpServer makes the MCP server for one HTTP request (the endpoint is stateless): tools/list
 * answers the caller's tools, tools/call parses the arguments with the tool's contract schema and
 * runs it through `call` (the claim's GuestCalls). Built per request, it holds nothing across
 * requests, so any API replica answers any request.
 */
export function createMcpServer(
  caller: McpCaller,
  call: GuestCall,
  context: { requestId: string; log: FastifyBaseLogger },
): Server {
  const server = new Server(
    { name: 'cubicle', version: CUBICLE_VERSION },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const isAllowed = (tool: McpTool) => caller.tools === null || caller.tools.has(tool.name);
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: McpTools.filter(isAllowed).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputJsonSchema as { type: 'object' },
      annotations: tool.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    try {
      const tool = toolNamed(request.params.name);
      if (!tool) throw new AppError('validation_failed', `no tool named ${request.params.name}`);
      if (!isAllowed(tool))
        throw new AppError('forbidden', `this MCP token may not use the ${tool.name} tool`);
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success)
        throw new AppError('validation_failed', `invalid arguments for ${tool.name}`, {
          issues: zodIssues(parsed.error, 'arguments'),
        });
      return await tool.run(call, parsed.data as Record<string, unknown>);
    } catch (err) {
      throw toToolCallError(err, context.requestId, context.log);
    }
  });
  return server;
}
