import type { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, listQueryOf } from '../common.js';
import { ActionRecord, ActionRecordId, ClaimScreenshotQuery } from '../action-record.js';
import { binaryBody, defineRoute, type RouteDef } from '../route-def.js';
import { ActionResult } from '../../guest/action-result.js';
import { GUEST_MAX_BODY_BYTES } from '../../guest/common.js';
import { ElementActionRequest } from '../../guest/element-action.js';
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
} from '../../guest/files.js';
import { ObserveRequest, ObserveResponse } from '../../guest/observe.js';
import { PixelActionRequest } from '../../guest/pixel-action.js';
import { ScreenshotImage, ScreenshotRequest } from '../../guest/screenshot.js';
import { ShellRunRequest, ShellRunResult } from '../../guest/shell.js';
import { VerifyStateRequest, VerifyStateResponse } from '../../guest/verify-state.js';
import {
  WindowCloseRequest,
  WindowLaunchRequest,
  WindowLaunchResponse,
  WindowListResponse,
} from '../../guest/windows.js';
import { claimChild, readErrors, writeErrors } from './shared.js';

// Driving a sandbox goes API → per-sandbox queue → worker → guest driver: the claim must be
// active, a call that outlives its bound is 504 `timeout` (maybe delivered: observe before
// retrying), an unreachable guest is 502. Guest errors (404 window_not_found, 400
// invalid_element_token, …) pass through unchanged.
const driveErrors = [...writeErrors, 'claim_not_active', 'timeout', 'backend_unavailable'] as const;
const windowErrors = [...driveErrors, 'window_not_found'] as const;
const fileErrors = [...driveErrors, 'conflict'] as const;
// While a human holds the desktop (a handoff), the calls that change it are refused.
const HANDOFF = 'handoff_active' as const;

/** drive builds one claim-holder call that forwards a guest operation (same schemas both ends). */
const drive = <B extends z.ZodType, Res extends z.ZodType>(r: {
  operationId: string;
  child: string;
  summary: string;
  description?: string;
  body: B;
  response: Res;
  bodyLimit?: number;
  errors: readonly (
    | (typeof writeErrors)[number]
    | 'claim_not_active'
    | 'timeout'
    | 'backend_unavailable'
    | 'window_not_found'
    | 'stale_snapshot'
    | 'invalid_element_token'
    | 'conflict'
    | 'handoff_active'
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
    ...(r.bodyLimit ? { bodyLimit: r.bodyLimit } : {}),
  });

/** Driving a claimed sandbox through its guest driver (tag `drive`). */
export const driveRoutes = {
  observeClaim: drive({
    operationId: 'observeClaim',
    child: 'observe',
    summary: 'Observe a window: its accessibility tree with element tokens and a screenshot',
    body: ObserveRequest,
    response: ObserveResponse,
    errors: [...windowErrors, 'stale_snapshot'],
  }),
  actClaim: drive({
    operationId: 'actClaim',
    child: 'act',
    summary: 'Act on an element by token (click, type, set value, …); the ActionResult is stored',
    body: ElementActionRequest,
    response: ActionResult,
    errors: [...windowErrors, 'invalid_element_token', HANDOFF],
  }),
  inputClaim: drive({
    operationId: 'inputClaim',
    child: 'input',
    summary: 'Pixel input on the latest screenshot of a window; the ActionResult is stored',
    body: PixelActionRequest,
    response: ActionResult,
    errors: [...windowErrors, HANDOFF],
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
    // stdin of up to 1 Mi characters may take several bytes each once JSON-encoded.
    bodyLimit: GUEST_MAX_BODY_BYTES,
    errors: [...fileErrors, HANDOFF],
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
    // The largest write (FILE_WRITE_MAX_BYTES as base64) with its envelope: the guest's own limit.
    bodyLimit: GUEST_MAX_BODY_BYTES,
    errors: [...fileErrors, HANDOFF],
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
    errors: [...fileErrors, HANDOFF],
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
    errors: [...driveErrors, HANDOFF],
  }),
  closeClaimWindow: drive({
    operationId: 'closeClaimWindow',
    child: 'windows/close',
    summary: 'Close a window; the ActionResult is stored',
    body: WindowCloseRequest,
    response: ActionResult,
    errors: [...windowErrors, HANDOFF],
  }),
  listClaimActions: defineRoute({
    operationId: 'listClaimActions',
    method: 'GET',
    path: claimChild('actions'),
    tag: 'drive',
    auth: 'api_key',
    summary: "The claim's stored ActionResults, newest first",
    params: ClaimPathParams,
    query: listQueryOf(ActionRecordId),
    responses: { 200: listOf(ActionRecord) },
    errors: [...readErrors],
  }),
} satisfies Record<string, RouteDef>;
