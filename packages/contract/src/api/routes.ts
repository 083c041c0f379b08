import { z } from 'zod';
import { AuditEvent } from './audit.js';
import {
  ClaimListQuery,
  Claim,
  ClaimPathParams,
  CreateClaimRequest,
  UpdateClaimRequest,
} from './claim.js';
import { ApiKeyId, ListQuery, listOf, RunId, SecretId, ViewerTicketId } from './common.js';
import { Pool, PoolPathParams, PoolSpec } from './pool.js';
import { CreateRunRequest, Run, RunEvent } from './run.js';
import { CreateSecretRequest, SecretRef } from './secret.js';
import { Healthz, Version } from './system.js';
import { ApiKey, ApiKeyCreated, CreateApiKeyRequest } from './tenant.js';
import { CreateViewerTicketRequest, ViewerTicket, ViewerTicketCreated } from './viewer-ticket.js';
import { ActionRecord, ClaimScreenshotQuery } from './action-record.js';
import { binaryBody, defineRoute, type RouteDef } from './route-def.js';
import { ActionResult } from '../guest/action-result.js';
import { ElementActionRequest } from '../guest/element-action.js';
import {
  FileDeleteRequest,
  FileDeleteResponse,
  FileListRequest,
  FileListResponse,
  FileReadRequest,
  FileReadResponse,
  FileStat,
  FileStatRequest,
  FileWriteRequest,
  FileWriteResponse,
} from '../guest/files.js';
import { ObserveRequest, ObserveResponse } from '../guest/observe.js';
import { PixelActionRequest } from '../guest/pixel-action.js';
import { ScreenshotImage, ScreenshotRequest } from '../guest/screenshot.js';
import { ShellRunRequest, ShellRunResult } from '../guest/shell.js';
import { VerifyStateRequest, VerifyStateResponse } from '../guest/verify-state.js';
import {
  WindowCloseRequest,
  WindowLaunchRequest,
  WindowLaunchResponse,
  WindowListResponse,
} from '../guest/windows.js';

/** IdempotencyHeaders: retried POSTs with the same key and body return the first response. */
export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional(),
});

const authErrors = ['unauthenticated', 'rate_limited'] as const;
const readErrors = [...authErrors, 'validation_failed', 'invalid_id', 'not_found'] as const;
const writeErrors = [...readErrors, 'invalid_json', 'payload_too_large', 'forbidden'] as const;

const claimChild = (child: string) => `/v1/claims/{id}/${child}`;

// Driving a sandbox goes API → per-sandbox queue → worker → guest driver: the claim must be
// active, a call that outlives its bound is 504 `timeout` (maybe delivered: observe before
// retrying), an unreachable guest is 502. Guest errors (404 window_not_found, 400
// invalid_element_token, …) pass through unchanged.
const driveErrors = [...writeErrors, 'claim_not_active', 'timeout', 'backend_unavailable'] as const;
const windowErrors = [...driveErrors, 'window_not_found'] as const;
const fileErrors = [...driveErrors, 'conflict'] as const;

/** drive builds one claim-holder call that forwards a guest operation (same schemas both ends). */
const drive = <B extends z.ZodType, Res extends z.ZodType>(r: {
  operationId: string;
  child: string;
  summary: string;
  description?: string;
  body: B;
  response: Res;
  errors: readonly (
    | (typeof writeErrors)[number]
    | 'claim_not_active'
    | 'timeout'
    | 'backend_unavailable'
    | 'window_not_found'
    | 'invalid_element_token'
    | 'conflict'
  )[];
}) =>
  defineRoute({
    operationId: r.operationId,
    method: 'POST',
    path: claimChild(r.child),
    tag: 'drive',
    auth: 'api_key',
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    params: ClaimPathParams,
    body: r.body,
    responses: { 200: r.response },
    errors: [...r.errors],
  });

/** Routes is every v1 endpoint; the OpenAPI document lists them in this order. */
export const Routes = {
  healthz: defineRoute({
    operationId: 'getHealthz',
    method: 'GET',
    path: '/healthz',
    tag: 'system',
    auth: 'none',
    summary: 'Liveness and dependency checks',
    responses: { 200: Healthz },
    errors: ['service_unavailable'],
  }),
  version: defineRoute({
    operationId: 'getVersion',
    method: 'GET',
    path: '/v1/version',
    tag: 'system',
    auth: 'none',
    summary: 'Service and protocol versions',
    responses: { 200: Version },
    errors: [],
  }),

  listApiKeys: defineRoute({
    operationId: 'listApiKeys',
    method: 'GET',
    path: '/v1/api-keys',
    tag: 'api-keys',
    auth: 'admin',
    summary: "List the tenant's API keys (prefixes only)",
    query: ListQuery,
    responses: { 200: listOf(ApiKey) },
    errors: [...readErrors, 'forbidden'],
  }),
  createApiKey: defineRoute({
    operationId: 'createApiKey',
    method: 'POST',
    path: '/v1/api-keys',
    tag: 'api-keys',
    auth: 'admin',
    summary: 'Create an API key; the key is shown in this response only',
    body: CreateApiKeyRequest,
    responses: { 201: ApiKeyCreated },
    errors: [...writeErrors],
  }),
  revokeApiKey: defineRoute({
    operationId: 'revokeApiKey',
    method: 'DELETE',
    path: '/v1/api-keys/{id}',
    tag: 'api-keys',
    auth: 'admin',
    summary: 'Revoke an API key',
    params: z.strictObject({ id: ApiKeyId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),

  listPools: defineRoute({
    operationId: 'listPools',
    method: 'GET',
    path: '/v1/pools',
    tag: 'pools',
    auth: 'api_key',
    summary: 'List pools with live sandbox counts',
    query: ListQuery,
    responses: { 200: listOf(Pool) },
    errors: [...readErrors],
  }),
  getPool: defineRoute({
    operationId: 'getPool',
    method: 'GET',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Get one pool with live sandbox counts',
    params: PoolPathParams,
    responses: { 200: Pool },
    errors: [...readErrors],
  }),
  applyPool: defineRoute({
    operationId: 'applyPool',
    method: 'PUT',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Create or update a pool declaratively',
    description:
      'Idempotent. Changing image, resources or env bumps the generation and rolls warm sandboxes; claimed ones are untouched.',
    params: PoolPathParams,
    body: PoolSpec,
    responses: { 200: Pool, 201: Pool },
    errors: [...writeErrors, 'quota_exceeded', 'conflict'],
  }),
  deletePool: defineRoute({
    operationId: 'deletePool',
    method: 'DELETE',
    path: '/v1/pools/{name}',
    tag: 'pools',
    auth: 'api_key',
    summary: 'Drain and delete a pool: live claims run to their end, warm sandboxes are destroyed',
    params: PoolPathParams,
    responses: { 202: Pool },
    errors: [...writeErrors],
  }),

  createClaim: defineRoute({
    operationId: 'createClaim',
    method: 'POST',
    path: '/v1/pools/{name}/claims',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Claim a sandbox from a pool',
    description:
      '201 with an active claim when a sandbox is ready (warm, or provisioned within `wait_seconds`); 202 with a pending claim otherwise (poll `GET /v1/claims/{id}`). A live claim with the same `name` is returned as is (reconnect). With `Idempotency-Key`, a retry with the same body returns the same claim; a different body is 409 `idempotency_key_reused`.',
    params: PoolPathParams,
    headers: IdempotencyHeaders,
    body: CreateClaimRequest,
    responses: { 200: Claim, 201: Claim, 202: Claim },
    errors: [
      ...writeErrors,
      'quota_exceeded',
      'idempotency_key_reused',
      'idempotency_in_progress',
      'gone',
    ],
  }),
  listClaims: defineRoute({
    operationId: 'listClaims',
    method: 'GET',
    path: '/v1/claims',
    tag: 'claims',
    auth: 'api_key',
    summary: 'List claims',
    query: ClaimListQuery,
    responses: { 200: listOf(Claim) },
    errors: [...readErrors],
  }),
  getClaim: defineRoute({
    operationId: 'getClaim',
    method: 'GET',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Get a claim',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...readErrors],
  }),
  heartbeatClaim: defineRoute({
    operationId: 'heartbeatClaim',
    method: 'POST',
    path: claimChild('heartbeat'),
    tag: 'claims',
    auth: 'api_key',
    summary: 'Record a heartbeat (keeps an idle-timeout claim alive)',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  updateClaim: defineRoute({
    operationId: 'updateClaim',
    method: 'PATCH',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Extend the TTL, up to the maximum lifetime',
    params: ClaimPathParams,
    body: UpdateClaimRequest,
    responses: { 200: Claim },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  releaseClaim: defineRoute({
    operationId: 'releaseClaim',
    method: 'DELETE',
    path: '/v1/claims/{id}',
    tag: 'claims',
    auth: 'api_key',
    summary: 'Release a claim; its sandbox is destroyed and never reused',
    params: ClaimPathParams,
    responses: { 200: Claim },
    errors: [...writeErrors],
  }),

  observeClaim: drive({
    operationId: 'observeClaim',
    child: 'observe',
    summary: 'Observe a window: its accessibility tree with element tokens and a screenshot',
    body: ObserveRequest,
    response: ObserveResponse,
    errors: windowErrors,
  }),
  actClaim: drive({
    operationId: 'actClaim',
    child: 'act',
    summary: 'Act on an element by token (click, type, set value, …); the ActionResult is stored',
    body: ElementActionRequest,
    response: ActionResult,
    errors: [...windowErrors, 'invalid_element_token'],
  }),
  inputClaim: drive({
    operationId: 'inputClaim',
    child: 'input',
    summary: 'Pixel input on the latest screenshot of a window; the ActionResult is stored',
    body: PixelActionRequest,
    response: ActionResult,
    errors: windowErrors,
  }),
  verifyClaim: drive({
    operationId: 'verifyClaim',
    child: 'verify',
    summary: 'Check predicates against the live window',
    body: VerifyStateRequest,
    response: VerifyStateResponse,
    errors: [...windowErrors, 'invalid_element_token'],
  }),
  screenshotClaim: drive({
    operationId: 'screenshotClaim',
    child: 'screenshot',
    summary: 'Capture the display or one window (JSON with base64 data and the pixel mapping)',
    body: ScreenshotRequest,
    response: ScreenshotImage,
    errors: windowErrors,
  }),
  getClaimScreenshot: defineRoute({
    operationId: 'getClaimScreenshot',
    method: 'GET',
    path: claimChild('screenshot'),
    tag: 'drive',
    auth: 'api_key',
    summary: 'The display (or one window) as a PNG file, e.g. for `curl -o desktop.png`',
    params: ClaimPathParams,
    query: ClaimScreenshotQuery,
    responses: { 200: binaryBody('image/png') },
    errors: [...windowErrors],
  }),
  runClaimShell: drive({
    operationId: 'runClaimShell',
    child: 'shell',
    summary: 'Run a command in the sandbox and collect its output',
    description:
      'Synchronous calls are bounded by the job timeout (120 s): longer commands answer 504 `timeout`.',
    body: ShellRunRequest,
    response: ShellRunResult,
    errors: fileErrors,
  }),
  readClaimFile: drive({
    operationId: 'readClaimFile',
    child: 'files/read',
    summary: 'Read a byte range of a file in the sandbox',
    body: FileReadRequest,
    response: FileReadResponse,
    errors: fileErrors,
  }),
  writeClaimFile: drive({
    operationId: 'writeClaimFile',
    child: 'files/write',
    summary: 'Write a file in the sandbox',
    body: FileWriteRequest,
    response: FileWriteResponse,
    errors: fileErrors,
  }),
  listClaimFiles: drive({
    operationId: 'listClaimFiles',
    child: 'files/list',
    summary: 'List a directory in the sandbox',
    body: FileListRequest,
    response: FileListResponse,
    errors: fileErrors,
  }),
  statClaimFile: drive({
    operationId: 'statClaimFile',
    child: 'files/stat',
    summary: 'Describe a path in the sandbox',
    body: FileStatRequest,
    response: FileStat,
    errors: fileErrors,
  }),
  deleteClaimFile: drive({
    operationId: 'deleteClaimFile',
    child: 'files/delete',
    summary: 'Delete a file or directory tree in the sandbox',
    body: FileDeleteRequest,
    response: FileDeleteResponse,
    errors: fileErrors,
  }),
  listClaimWindows: defineRoute({
    operationId: 'listClaimWindows',
    method: 'GET',
    path: claimChild('windows'),
    tag: 'drive',
    auth: 'api_key',
    summary: 'Top-level windows of the sandbox, front to back',
    params: ClaimPathParams,
    responses: { 200: WindowListResponse },
    errors: [...driveErrors],
  }),
  launchClaimWindow: drive({
    operationId: 'launchClaimWindow',
    child: 'windows/launch',
    summary: 'Start an app in the sandbox and wait for its window',
    body: WindowLaunchRequest,
    response: WindowLaunchResponse,
    errors: driveErrors,
  }),
  closeClaimWindow: drive({
    operationId: 'closeClaimWindow',
    child: 'windows/close',
    summary: 'Close a window; the ActionResult is stored',
    body: WindowCloseRequest,
    response: ActionResult,
    errors: windowErrors,
  }),
  listClaimActions: defineRoute({
    operationId: 'listClaimActions',
    method: 'GET',
    path: claimChild('actions'),
    tag: 'drive',
    auth: 'api_key',
    summary: "The claim's stored ActionResults, newest first",
    params: ClaimPathParams,
    query: ListQuery,
    responses: { 200: listOf(ActionRecord) },
    errors: [...readErrors],
  }),

  createViewerTicket: defineRoute({
    operationId: 'createViewerTicket',
    method: 'POST',
    path: claimChild('viewer-tickets'),
    tag: 'viewer',
    auth: 'api_key',
    summary: 'Mint an expiring viewer ticket (view-only enforced by the server)',
    params: ClaimPathParams,
    body: CreateViewerTicketRequest,
    responses: { 201: ViewerTicketCreated },
    errors: [...writeErrors, 'claim_not_active'],
  }),
  listViewerTickets: defineRoute({
    operationId: 'listViewerTickets',
    method: 'GET',
    path: claimChild('viewer-tickets'),
    tag: 'viewer',
    auth: 'api_key',
    summary: "List a claim's viewer tickets",
    params: ClaimPathParams,
    query: ListQuery,
    responses: { 200: listOf(ViewerTicket) },
    errors: [...readErrors],
  }),
  revokeViewerTicket: defineRoute({
    operationId: 'revokeViewerTicket',
    method: 'DELETE',
    path: claimChild('viewer-tickets/{ticket_id}'),
    tag: 'viewer',
    auth: 'api_key',
    summary: 'Revoke a viewer ticket; open streams close within a second',
    params: z.strictObject({ id: ClaimPathParams.shape.id, ticket_id: ViewerTicketId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),

  createSecret: defineRoute({
    operationId: 'createSecret',
    method: 'POST',
    path: claimChild('secrets'),
    tag: 'secrets',
    auth: 'api_key',
    summary: 'Attach a secret to a claim (write-only: its value is never returned)',
    params: ClaimPathParams,
    body: CreateSecretRequest,
    responses: { 201: SecretRef },
    errors: [...writeErrors, 'already_exists', 'claim_not_active'],
  }),
  listSecrets: defineRoute({
    operationId: 'listSecrets',
    method: 'GET',
    path: claimChild('secrets'),
    tag: 'secrets',
    auth: 'api_key',
    summary: "List a claim's secrets by name",
    params: ClaimPathParams,
    responses: { 200: listOf(SecretRef) },
    errors: [...readErrors],
  }),
  deleteSecret: defineRoute({
    operationId: 'deleteSecret',
    method: 'DELETE',
    path: claimChild('secrets/{secret_id}'),
    tag: 'secrets',
    auth: 'api_key',
    summary: 'Delete a secret',
    params: z.strictObject({ id: ClaimPathParams.shape.id, secret_id: SecretId }),
    responses: { 204: null },
    errors: [...writeErrors],
  }),

  createRun: defineRoute({
    operationId: 'createRun',
    method: 'POST',
    path: claimChild('runs'),
    tag: 'runs',
    auth: 'api_key',
    summary: 'Start an agent run in the claimed sandbox with chosen secrets',
    params: ClaimPathParams,
    headers: IdempotencyHeaders,
    body: CreateRunRequest,
    responses: { 202: Run },
    errors: [...writeErrors, 'claim_not_active', 'idempotency_key_reused'],
  }),
  getRun: defineRoute({
    operationId: 'getRun',
    method: 'GET',
    path: '/v1/runs/{run_id}',
    tag: 'runs',
    auth: 'api_key',
    summary: 'Get a run',
    params: z.strictObject({ run_id: RunId }),
    responses: { 200: Run },
    errors: [...readErrors],
  }),
  listRunEvents: defineRoute({
    operationId: 'listRunEvents',
    method: 'GET',
    path: '/v1/runs/{run_id}/events',
    tag: 'runs',
    auth: 'api_key',
    summary: "A run's events in order (secret values redacted)",
    params: z.strictObject({ run_id: RunId }),
    query: z.strictObject({
      after_seq: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(200),
    }),
    responses: { 200: listOf(RunEvent) },
    errors: [...readErrors],
  }),

  listAuditEvents: defineRoute({
    operationId: 'listAuditEvents',
    method: 'GET',
    path: '/v1/audit-events',
    tag: 'audit',
    auth: 'admin',
    summary: "The tenant's audit log, newest first",
    query: ListQuery,
    responses: { 200: listOf(AuditEvent) },
    errors: [...readErrors, 'forbidden'],
  }),
} satisfies Record<string, RouteDef>;

export type RouteName = keyof typeof Routes;
