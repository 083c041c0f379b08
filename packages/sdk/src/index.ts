export { Cubicle } from './client.js';
export { ClaimHandle, type Claim } from './claim-handle.js';
export {
  Claims,
  Pools,
  Runs,
  Secrets,
  ViewerTickets,
  type EventsOptions,
  type Pool,
  type Run,
  type RunEvent,
} from './resources.js';
export { Profiles, ReplayLinks, Snapshots } from './stored-state.js';
export {
  AnthropicComputerTool,
  OpenAIComputerTool,
  type ActionResult,
  type AnthropicContent,
  type AnthropicToolDefinition,
  type AnthropicToolOutput,
  type AnthropicToolVersion,
  type ComputerToolKind,
  type ComputerToolOptions,
  type OpenAIComputerCall,
  type OpenAIToolDefinition,
  type OpenAIToolOutput,
} from './computer-tool/index.js';
export { ApiKeys, AuditEvents, TenantApi, UsageApi, Webhooks } from './admin.js';
export {
  CubicleError,
  isCubicleError,
  type ClientErrorCode,
  type CubicleErrorCode,
  type ErrorEnvelopeJson,
} from './errors.js';
export {
  Transport,
  DEFAULT_BASE_URL,
  isRetrySafe,
  type CallOptions,
  type ClientOptions,
  type OperationInput,
} from './transport.js';
export type { BodyOf, ItemOf, OperationName, ParamsOf, QueryOf, ResponseOf } from './operations.js';
export { routeTable, type RouteInfo } from './generated/routes.js';
export { methodOf } from './method-map.js';
export { DEFAULT_RETRY, backoffMs, retryAfterMs, type RetryOptions } from './retry.js';
export { parseSse, type SseMessage } from './sse.js';
export { SDK_VERSION, USER_AGENT } from './version.js';
export type { Logger, RequestLogFields } from './logger.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookHeaders,
} from './verify-webhook.js';
// Every request and answer schema of the API as a plain type: `import type { schemas } …`,
// then `schemas.Claim`, `schemas.PoolSpec`, `schemas.WebhookPayload`.
export type * as schemas from './generated/api-types.js';
