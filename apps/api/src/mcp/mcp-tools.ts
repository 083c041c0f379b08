import {
  Routes,
  WaitForRequest,
  type CreateHandoffRequest,
  type HandoffCreated,
  type McpToolName,
  type RouteDef,
  type RouteName,
} from '@cubicle/contract/api';
import { ObserveResponse, ScreenshotImage } from '@cubicle/contract/guest';
import { z } from 'zod';
import { DriveOperations } from '../routes/drive.js';
import { waitFor, type GuestCall } from './wait-for.js';

/** ToolResult is an MCP CallToolResult as this server builds it. */
export interface ToolResult {
  [key: string]: unknown;
  content: ({ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string })[];
  structuredContent: Record<string, unknown>;
}

/**
 * ToolRunContext is what a tool runs with: the claim's guest calls, and the app's handoff service
 * (the one the REST route calls), both bound to the caller.
 */
export interface ToolRunContext {
  call: GuestCall;
  requestHandoff(body: CreateHandoffRequest): Promise<HandoffCreated>;
}

/** ToolHints are MCP tool annotations: what a client may assume before calling. */
interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
}

export interface McpTool {
  name: McpToolName;
  description: string;
  /** The contract schema the arguments are parsed with (the REST route's body, or wait_for's). */
  input: z.ZodType;
  /** The same schema as JSON Schema, for tools/list (computed once). */
  inputJsonSchema: Record<string, unknown>;
  annotations: ToolHints;
  /** Runs the tool with arguments `input` has parsed (defaults applied). */
  run(context: ToolRunContext, args: Record<string, unknown>): Promise<ToolResult>;
}

/**
 * toolJsonSchema is the JSON Schema MCP clients see: the contract schema's input form, inlined.
 * MCP wants `type: "object"` at the top, which a union of objects (act, input, screenshot) has
 * only per branch, so it is stated once more above the branches.
 */
export function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json.type === 'object' ? json : { type: 'object', ...json };
}

/** asJson is the structured result plus the same JSON as text, for clients that read only text. */
function asJson(structured: Record<string, unknown>, images: ToolResult['content'] = []) {
  return {
    content: [...images, { type: 'text' as const, text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
}

const mimeOf = (format: 'png' | 'jpeg') => (format === 'png' ? 'image/png' : 'image/jpeg');

/** splitImage moves a screenshot's pixels into image content; its mapping stays structured. */
function splitImage(image: ScreenshotImage) {
  const { data, ...mapping } = image;
  return {
    mapping,
    content: { type: 'image' as const, data, mimeType: mimeOf(image.format) },
  };
}

type DriveRoute = keyof typeof DriveOperations;

/**
 * driveTool is a tool that is one drive route: its arguments are the route's body (parsed with
 * the route's own schema), its description the route's summary, and it runs the route's guest
 * operation. `shape` turns the guest's answer into the tool result (default: structured JSON).
 */
function driveTool(
  name: McpToolName,
  routeName: DriveRoute & RouteName,
  annotations: ToolHints,
  shape: (answer: Record<string, unknown>) => ToolResult = (answer) => asJson(answer),
  options: { body?: z.ZodType; note?: string } = {},
): McpTool {
  const def: RouteDef = Routes[routeName];
  const input = options.body ?? def.body;
  if (!input) throw new Error(`${routeName} has no body schema for the ${name} tool`);
  return {
    name,
    description: [def.summary, def.description, options.note].filter(Boolean).join('. '),
    input,
    inputJsonSchema: toolJsonSchema(input),
    annotations,
    run: async ({ call }, args) =>
      shape((await call(DriveOperations[routeName], args)) as Record<string, unknown>),
  };
}

const readOnly: ToolHints = { readOnlyHint: true };
const acts: ToolHints = { readOnlyHint: false, destructiveHint: true, idempotentHint: false };

/**
 * McpTools is every tool of the claim's MCP endpoint, in tools/list order. All but the last two
 * are drive routes; wait_for composes verify and screenshot calls (wait-for.ts), request_handoff
 * is the handoff route's service.
 */
export const McpTools: readonly McpTool[] = [
  driveTool(
    'screenshot',
    'screenshotClaim',
    readOnly,
    (answer) => {
      const { mapping, content } = splitImage(ScreenshotImage.parse(answer));
      return asJson(mapping, [content]);
    },
    {
      note: 'Here the pixels come as image content (scaled to `max_dimension`), the mapping as structured content',
    },
  ),
  driveTool(
    'observe',
    'observeClaim',
    readOnly,
    (answer) => {
      const observed = ObserveResponse.parse(answer);
      if (!observed.screenshot) return asJson(observed);
      const { mapping, content } = splitImage(observed.screenshot);
      return asJson({ ...observed, screenshot: mapping }, [content]);
    },
    { note: 'The screenshot, when asked for, comes as image content' },
  ),
  driveTool('act', 'actClaim', acts),
  driveTool('input', 'inputClaim', acts),
  driveTool('verify', 'verifyClaim', readOnly),
  driveTool('shell', 'runClaimShell', acts),
  driveTool('files_read', 'readClaimFile', readOnly),
  driveTool('files_write', 'writeClaimFile', { ...acts, idempotentHint: true }),
  driveTool('files_list', 'listClaimFiles', readOnly),
  // GET /windows takes no body; its tool takes no arguments.
  driveTool('windows_list', 'listClaimWindows', readOnly, undefined, { body: z.strictObject({}) }),
  driveTool('windows_launch', 'launchClaimWindow', acts),
  {
    name: 'wait_for',
    description:
      'Wait until an element matching a selector exists in a window (`until: "element"`), until some element\'s name or value contains a text (`until: "text"`), or until the screen or one window stops changing for `stable_ms` (`until: "stable"`); gives up after `timeout_ms` with `satisfied: false`.',
    input: WaitForRequest,
    inputJsonSchema: toolJsonSchema(WaitForRequest),
    annotations: readOnly,
    run: async ({ call }, args) => asJson({ ...(await waitFor(call, args as WaitForRequest)) }),
  },
  {
    name: 'request_handoff',
    description: `${Routes.requestHandoff.summary}. ${Routes.requestHandoff.description}`,
    input: Routes.requestHandoff.body,
    inputJsonSchema: toolJsonSchema(Routes.requestHandoff.body),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async ({ requestHandoff }, args) =>
      asJson({ ...(await requestHandoff(args as CreateHandoffRequest)) }),
  },
];

/** toolNamed finds a tool by the name a client called. */
export function toolNamed(name: string): McpTool | undefined {
  return McpTools.find((tool) => tool.name === name);
}
