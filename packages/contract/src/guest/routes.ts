import { z } from 'zod';
import { ErrorEnvelope, type ErrorCode } from '../errors/envelope.js';
import { named } from '../registry.js';
import { ActionResult } from './action-result.js';
import {
  ArchiveApplyRequest,
  ArchiveApplyResponse,
  ArchiveNeedRequest,
  ArchiveNeedResponse,
  ArchiveReadRequest,
  ArchiveReadResponse,
  ArchiveScanRequest,
  ArchiveScanResponse,
  ArchiveStageRequest,
  ArchiveStageResponse,
} from './archive.js';
import { GUEST_PROTOCOL_VERSION } from './common.js';
import { ElementActionRequest } from './element-action.js';
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
} from './files.js';
import { HealthzResponse } from './health.js';
import { ObserveRequest, ObserveResponse } from './observe.js';
import { PixelActionRequest } from './pixel-action.js';
import { RecordingStartRequest, RecordingStatus } from './recording.js';
import { ScreenshotImage, ScreenshotRequest } from './screenshot.js';
import { SecretsDeleteRequest, SecretsResponse, SecretsWriteRequest } from './secrets.js';
import { ShellKillRequest, ShellKillResponse, ShellRunRequest, ShellRunResult } from './shell.js';
import { ShellStreamClientMessage, ShellStreamServerMessage } from './shell-stream.js';
import { VerifyStateRequest, VerifyStateResponse } from './verify-state.js';
import {
  VideoAckRequest,
  VideoSegmentData,
  VideoSegmentRequest,
  VideoStartRequest,
  VideoStatus,
} from './video.js';
import {
  WindowCloseRequest,
  WindowLaunchRequest,
  WindowLaunchResponse,
  WindowListResponse,
} from './windows.js';

/** EmptyRequest is the body of POSTs that take no parameters; `{}` and nothing else. */
export const EmptyRequest = named('GuestEmptyRequest', z.strictObject({}));
export type EmptyRequest = z.infer<typeof EmptyRequest>;

/** GuestErrorResponse: every non-2xx guest answer is the same envelope as the REST API's. */
export const GuestErrorResponse = ErrorEnvelope;
export type GuestErrorResponse = ErrorEnvelope;

type Code = z.infer<typeof ErrorCode>;

/**
 * GuestHttpRoute describes one JSON endpoint. `request` is the POST body (null: GET, no body);
 * `response` is the 200 body, or null for a binary body of `content_type`. Non-2xx answers are
 * GuestErrorResponse with one of `errors` (plus the auth, validation and internal codes every
 * route can return).
 */
export interface GuestHttpRoute {
  transport: 'http';
  method: 'GET' | 'POST';
  path: string;
  /** Whether the bearer token is required; only `/healthz` is open. */
  auth: boolean;
  summary: string;
  request: z.ZodType | null;
  response: z.ZodType | null;
  content_type: 'application/json' | 'application/gzip';
  errors: readonly Code[];
}

/** GuestWebSocketRoute is a stream: both directions are JSON text frames of the given schemas. */
export interface GuestWebSocketRoute {
  transport: 'websocket';
  path: string;
  auth: true;
  summary: string;
  client_message: z.ZodType;
  server_message: z.ZodType;
}

export type GuestRoute = GuestHttpRoute | GuestWebSocketRoute;

const v1 = (path: string) => `/${GUEST_PROTOCOL_VERSION}${path}`;

/**
 * http fills what almost every route shares (bearer auth, JSON, the `/v1` prefix) and keeps
 * each entry's own schema types, so handlers get `z.infer` of exactly their request.
 */
const http = <
  Req extends z.ZodType | null,
  Res extends z.ZodType | null,
  M extends 'GET' | 'POST' = 'POST',
>(route: {
  method?: M;
  path: string;
  summary: string;
  request: Req;
  response: Res;
  errors?: readonly Code[];
  content_type?: GuestHttpRoute['content_type'];
}): {
  transport: 'http';
  method: M;
  path: string;
  auth: true;
  summary: string;
  request: Req;
  response: Res;
  content_type: GuestHttpRoute['content_type'];
  errors: readonly Code[];
} =>
  // The return type is spelled out: with `satisfies` alone the emitted declarations widened
  // `request`/`response` to `ZodType | null`, and handlers lost their body types.
  ({
    transport: 'http' as const,
    method: (route.method ?? 'POST') as M,
    path: v1(route.path),
    auth: true,
    summary: route.summary,
    request: route.request,
    response: route.response,
    content_type: route.content_type ?? 'application/json',
    errors: route.errors ?? [],
  });

// Acting on a window that is gone is 404 with nothing delivered; everything the driver decides
// not to deliver after that point is a 200 `refused` ActionResult.
const windowErrors = ['window_not_found'] as const;
const fileErrors = ['not_found', 'forbidden', 'conflict', 'payload_too_large'] as const;

/**
 * GuestRoutes is every guest endpoint as data, keyed by operation name (the `operation` of a
 * `guest.call` job). The driver registers its routes from this table and the control plane's
 * client validates against it, so the two ends share one set of schemas.
 */
export const GuestRoutes = {
  // Unversioned and open: probes run before any token is known, and it reveals nothing private.
  healthz: {
    transport: 'http',
    method: 'GET',
    path: '/healthz',
    auth: false,
    summary: 'Versions, display, accessibility bus and VNC port',
    request: null,
    response: HealthzResponse,
    content_type: 'application/json',
    errors: [],
  },
  'windows.list': http({
    method: 'GET',
    path: '/windows',
    summary: 'Top-level windows, front to back',
    request: null,
    response: WindowListResponse,
  }),
  'windows.launch': http({
    path: '/windows/launch',
    summary: 'Start an app and wait for its window',
    request: WindowLaunchRequest,
    response: WindowLaunchResponse,
    errors: ['not_found'],
  }),
  'windows.close': http({
    path: '/windows/close',
    summary: 'Close a window',
    request: WindowCloseRequest,
    response: ActionResult,
    errors: windowErrors,
  }),
  observe: http({
    path: '/observe',
    summary: 'Accessibility tree of one window (get_window_state)',
    request: ObserveRequest,
    response: ObserveResponse,
    errors: [...windowErrors, 'stale_snapshot'],
  }),
  'act.element': http({
    path: '/act/element',
    summary: 'Act on an element by token',
    request: ElementActionRequest,
    response: ActionResult,
    errors: windowErrors,
  }),
  'act.pixel': http({
    path: '/act/pixel',
    summary: 'Input at screenshot pixels',
    request: PixelActionRequest,
    response: ActionResult,
    errors: windowErrors,
  }),
  verify_state: http({
    path: '/verify_state',
    summary: 'Check predicates against the live window',
    request: VerifyStateRequest,
    response: VerifyStateResponse,
    errors: windowErrors,
  }),
  screenshot: http({
    path: '/screenshot',
    summary: 'Capture the display or one window',
    request: ScreenshotRequest,
    response: ScreenshotImage,
    errors: windowErrors,
  }),
  'shell.run': http({
    path: '/shell/run',
    summary: 'Run a command and collect its output',
    request: ShellRunRequest,
    response: ShellRunResult,
    // conflict: the caller's run_id is already in use.
    errors: ['conflict', 'not_found'],
  }),
  'shell.stream': {
    transport: 'websocket',
    path: v1('/shell/stream'),
    auth: true,
    summary: 'Run a command with streamed stdin, stdout and stderr',
    client_message: ShellStreamClientMessage,
    server_message: ShellStreamServerMessage,
  },
  'shell.kill': http({
    path: '/shell/kill',
    summary: 'Signal a running command',
    request: ShellKillRequest,
    response: ShellKillResponse,
    errors: ['not_found'],
  }),
  'files.read': http({
    path: '/files/read',
    summary: 'Read a byte range of a file',
    request: FileReadRequest,
    response: FileReadResponse,
    errors: fileErrors,
  }),
  'files.write': http({
    path: '/files/write',
    summary: 'Write a file (atomically by default)',
    request: FileWriteRequest,
    response: FileWriteResponse,
    errors: fileErrors,
  }),
  'files.list': http({
    path: '/files/list',
    summary: 'List a directory',
    request: FileListRequest,
    response: FileListResponse,
    errors: fileErrors,
  }),
  'files.stat': http({
    path: '/files/stat',
    summary: 'Describe a path',
    request: FileStatRequest,
    response: FileStat,
    errors: fileErrors,
  }),
  'files.delete': http({
    path: '/files/delete',
    summary: 'Delete a file or directory tree',
    request: FileDeleteRequest,
    response: FileDeleteResponse,
    errors: fileErrors,
  }),
  'recording.start': http({
    path: '/recording/start',
    summary: 'Start recording the trajectory',
    request: RecordingStartRequest,
    response: RecordingStatus,
    errors: ['conflict'],
  }),
  'recording.stop': http({
    path: '/recording/stop',
    summary: 'Stop recording',
    request: EmptyRequest,
    response: RecordingStatus,
    errors: ['conflict'],
  }),
  'recording.archive': http({
    method: 'GET',
    path: '/recording/archive',
    summary: 'The last recording as one tar.gz (trajectory.jsonl and PNG frames)',
    request: null,
    response: null,
    content_type: 'application/gzip',
    errors: ['not_found'],
  }),
  // The guest archive (archive.ts): profiles and snapshots move a home's files through these.
  'archive.scan': http({
    path: '/archive/scan',
    summary: 'Manifest of paths under the home (path, size, mtime, mode, content hash)',
    request: ArchiveScanRequest,
    response: ArchiveScanResponse,
    errors: ['conflict'],
  }),
  'archive.read': http({
    path: '/archive/read',
    summary: 'Bytes of scanned chunks, hash-checked, up to the transfer bound',
    request: ArchiveReadRequest,
    response: ArchiveReadResponse,
    errors: ['conflict', 'not_found'],
  }),
  'archive.need': http({
    path: '/archive/need',
    summary: 'Chunks a restore must stage (not already in the home or staged)',
    request: ArchiveNeedRequest,
    response: ArchiveNeedResponse,
    errors: ['conflict'],
  }),
  'archive.stage': http({
    path: '/archive/stage',
    summary: 'Stage chunks ahead of apply (each checked against its id)',
    request: ArchiveStageRequest,
    response: ArchiveStageResponse,
    errors: ['conflict', 'payload_too_large'],
  }),
  'archive.apply': http({
    path: '/archive/apply',
    summary: 'Make paths of the home hold exactly a manifest, from staged chunks',
    request: ArchiveApplyRequest,
    response: ArchiveApplyResponse,
    errors: ['conflict', 'payload_too_large'],
  }),
  // The screen video (video.ts), called by the worker's recording puller only.
  'video.start': http({
    path: '/video/start',
    summary: 'Start the screen encoder (idempotent); the guest restarts it if it dies',
    request: VideoStartRequest,
    response: VideoStatus,
    errors: ['conflict'],
  }),
  'video.status': http({
    path: '/video/status',
    summary: 'Encoder state and the finished segments not yet acknowledged',
    request: EmptyRequest,
    response: VideoStatus,
  }),
  'video.segment': http({
    path: '/video/segment',
    summary: 'One finished segment (or a run init), base64',
    request: VideoSegmentRequest,
    response: VideoSegmentData,
    errors: ['not_found'],
  }),
  'video.ack': http({
    path: '/video/ack',
    summary: 'Delete segments the control plane has stored',
    request: VideoAckRequest,
    response: VideoStatus,
  }),
  'video.stop': http({
    path: '/video/stop',
    summary: 'Stop the encoder, closing its last segment',
    request: EmptyRequest,
    response: VideoStatus,
  }),
  // Called by the worker only (never from a drive route): values come from the sealed store.
  'secrets.write': http({
    path: '/secrets/write',
    summary: 'Write secret files (0600) into the secrets tmpfs',
    request: SecretsWriteRequest,
    response: SecretsResponse,
    errors: ['payload_too_large'],
  }),
  'secrets.delete': http({
    path: '/secrets/delete',
    summary: 'Remove secret files',
    request: SecretsDeleteRequest,
    response: SecretsResponse,
  }),
} as const satisfies Record<string, GuestRoute>;

export type GuestOperation = keyof typeof GuestRoutes;
