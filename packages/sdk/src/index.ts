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
