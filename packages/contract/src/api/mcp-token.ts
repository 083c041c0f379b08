import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { WindowId } from '../guest/common.js';
import { ElementSelector } from '../guest/verify-state.js';
import { ClaimId, McpTokenId, Timestamp } from './common.js';

/**
 * McpToolName is every tool the claim's MCP endpoint serves. Each drives the claim the way its
 * REST twin does (`act` is POST /act, …, `request_handoff` is POST /handoffs); `wait_for` polls
 * verify or screenshots until its condition holds.
 */
export const McpToolName = named(
  'McpToolName',
  z.enum([
    'screenshot',
    'observe',
    'act',
    'input',
    'verify',
    'shell',
    'files_read',
    'files_write',
    'files_list',
    'windows_list',
    'windows_launch',
    'wait_for',
    'request_handoff',
  ]),
);
export type McpToolName = z.infer<typeof McpToolName>;

/** MCP_TOKEN_MAX_TTL_SECONDS bounds how long a leaked token can drive a desktop. */
export const MCP_TOKEN_MAX_TTL_SECONDS = 86_400;

export const CreateMcpTokenRequest = named(
  'CreateMcpTokenRequest',
  z.strictObject({
    ttl_seconds: z.number().int().min(1).max(MCP_TOKEN_MAX_TTL_SECONDS).default(3600),
    /** The tools the token may list and call; all of them when omitted. A repeat counts once. */
    tools: z.array(McpToolName).min(1).max(McpToolName.options.length).optional(),
  }),
);
export type CreateMcpTokenRequest = z.infer<typeof CreateMcpTokenRequest>;

export const McpToken = named(
  'McpToken',
  z.strictObject({
    id: McpTokenId,
    claim_id: ClaimId,
    /** The tools the token may use; null: every tool. */
    tools: z.array(McpToolName).nullable(),
    expires_at: Timestamp,
    revoked_at: Timestamp.nullable(),
    created_at: Timestamp,
  }),
);
export type McpToken = z.infer<typeof McpToken>;

/** McpTokenCreated carries the signed token and the endpoint to give an MCP client, once. */
export const McpTokenCreated = named(
  'McpTokenCreated',
  z.strictObject({
    ...McpToken.shape,
    /** `Authorization: Bearer <token>` on `mcp_url`; shown once, only its id is stored. */
    token: z.string(),
    /** The claim's Streamable HTTP MCP endpoint (`…/v1/claims/{id}/mcp`). */
    mcp_url: z.url(),
  }),
);
export type McpTokenCreated = z.infer<typeof McpTokenCreated>;

/** McpTokenClaims is the signed payload (JWT claims) of an MCP token. */
export const McpTokenClaims = z.strictObject({
  jti: McpTokenId,
  tnt: z.string(),
  clm: ClaimId,
  iat: z.number().int(),
  exp: z.number().int(),
});
export type McpTokenClaims = z.infer<typeof McpTokenClaims>;

/** WAIT_FOR_MAX_TIMEOUT_MS bounds one `wait_for` call (a guest call's own bound is 120 s). */
export const WAIT_FOR_MAX_TIMEOUT_MS = 60_000;

const waitTimeout = z.int().min(0).max(WAIT_FOR_MAX_TIMEOUT_MS).default(10_000);

/**
 * WaitForRequest is the MCP `wait_for` tool's input: wait until an element matching `selector`
 * exists in the window, until some element's name or value contains `text`, or until the screen
 * (or one window) stops changing for `stable_ms`; each gives up after `timeout_ms`.
 */
export const WaitForRequest = named(
  'McpWaitForRequest',
  z.discriminatedUnion('until', [
    z.strictObject({
      until: z.literal('element'),
      window_id: WindowId,
      selector: ElementSelector,
      timeout_ms: waitTimeout,
    }),
    z.strictObject({
      until: z.literal('text'),
      window_id: WindowId,
      text: text().min(1).max(4096),
      timeout_ms: waitTimeout,
    }),
    z.strictObject({
      until: z.literal('stable'),
      window_id: WindowId.optional(),
      /** How long the pixels must stay the same. */
      stable_ms: z.int().min(100).max(10_000).default(500),
      timeout_ms: waitTimeout,
    }),
  ]),
);
export type WaitForRequest = z.infer<typeof WaitForRequest>;

/** WaitForResult: `satisfied` false means the timeout passed first. */
export const WaitForResult = named(
  'McpWaitForResult',
  z.strictObject({
    satisfied: z.boolean(),
    waited_ms: z.number().min(0),
    /** Checks made (verify calls or screenshots). */
    samples: z.int().min(0),
  }),
);
export type WaitForResult = z.infer<typeof WaitForResult>;
