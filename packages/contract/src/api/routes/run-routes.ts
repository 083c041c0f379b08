import { z } from 'zod';
import { ClaimPathParams } from '../claim.js';
import { listOf, listQueryOf, RunId } from '../common.js';
import {
  defineRoute,
  defineSocketRoute,
  type RouteDef,
  type SocketRouteDef,
} from '../route-def.js';
import {
  CreateRunRequest,
  Run,
  RunListQuery,
  RunCancelRequest,
  RunEvent,
  RunEventPage,
  RunStdinRequest,
  RunStreamQuery,
} from '../run.js';
import { claimChild, IdempotencyHeaders, readErrors, writeErrors } from './shared.js';

const RunPathParams = z.strictObject({ run_id: RunId });

/**
 * Runs: a program started in a claimed sandbox by the worker through the guest's shell stream,
 * with its output as a dense, resumable event log (JSON pages, Server-Sent Events, WebSocket).
 */
export const runRoutes = {
  createRun: defineRoute({
    operationId: 'createRun',
    method: 'POST',
    path: claimChild('runs'),
    tag: 'runs',
    auth: 'api_key',
    summary: 'Start a run in the claimed sandbox (202: queued; follow its events)',
    description:
      "`secrets` names the claim's secrets to pass as environment variables of this run only; an unknown name is 400 naming it. With `Idempotency-Key`, a retry with the same body returns the same run.",
    params: ClaimPathParams,
    headers: IdempotencyHeaders,
    body: CreateRunRequest,
    responses: { 202: Run },
    errors: [
      ...writeErrors,
      'secret_not_usable',
      'claim_not_active',
      'handoff_active',
      'idempotency_key_reused',
      'idempotency_in_progress',
    ],
  }),
  listClaimRuns: defineRoute({
    operationId: 'listClaimRuns',
    method: 'GET',
    path: claimChild('runs'),
    tag: 'runs',
    auth: 'api_key',
    summary: "A claim's runs, newest first",
    params: ClaimPathParams,
    query: listQueryOf(RunId),
    responses: { 200: listOf(Run) },
    errors: [...readErrors],
  }),
  listRuns: defineRoute({
    operationId: 'listRuns',
    method: 'GET',
    path: '/v1/runs',
    tag: 'runs',
    auth: 'api_key',
    summary: "The tenant's runs across its claims, newest first (optionally one status)",
    query: RunListQuery,
    responses: { 200: listOf(Run) },
    errors: [...readErrors],
  }),
  getRun: defineRoute({
    operationId: 'getRun',
    method: 'GET',
    path: '/v1/runs/{run_id}',
    tag: 'runs',
    auth: 'api_key',
    summary: 'Get a run',
    params: RunPathParams,
    responses: { 200: Run },
    errors: [...readErrors],
  }),
  listRunEvents: defineRoute({
    operationId: 'listRunEvents',
    method: 'GET',
    path: '/v1/runs/{run_id}/events',
    tag: 'runs',
    auth: 'api_key',
    summary: "A run's events in order, after `after_seq` (secret values redacted)",
    params: RunPathParams,
    query: z.strictObject({
      after_seq: z.coerce.number().int().min(0).default(0),
      limit: z.coerce.number().int().min(1).max(1000).default(200),
    }),
    responses: { 200: RunEventPage },
    errors: [...readErrors],
  }),
  streamRunEvents: defineRoute({
    operationId: 'streamRunEvents',
    method: 'GET',
    path: '/v1/runs/{run_id}/events/stream',
    tag: 'runs',
    auth: 'api_key',
    summary:
      "A run's events live as Server-Sent Events (`id:` is the seq; resume with `Last-Event-ID`)",
    description:
      'Each event is `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`. The stream first replays the events after `Last-Event-ID` (or `?after_seq=`), then follows the run live, and ends with `event: end` after the final status. The same stream is served as a WebSocket at `/v1/runs/{run_id}/events/ws` (`streamRunEventsSocket` under `x-cubicle-websockets`).',
    params: RunPathParams,
    query: RunStreamQuery,
    responses: { 200: null },
    errors: [...readErrors],
  }),
  writeRunStdin: defineRoute({
    operationId: 'writeRunStdin',
    method: 'POST',
    path: '/v1/runs/{run_id}/stdin',
    tag: 'runs',
    auth: 'api_key',
    summary: "Write to a run's stdin (delivered in order; `eof` closes it)",
    params: RunPathParams,
    body: RunStdinRequest,
    responses: { 202: Run },
    errors: [...writeErrors, 'conflict', 'handoff_active'],
  }),
  cancelRun: defineRoute({
    operationId: 'cancelRun',
    method: 'POST',
    path: '/v1/runs/{run_id}/cancel',
    tag: 'runs',
    auth: 'api_key',
    summary:
      'Cancel a run: SIGINT to its process group, SIGKILL after the grace period (idempotent)',
    params: RunPathParams,
    body: RunCancelRequest,
    responses: { 202: Run },
    errors: [...writeErrors],
  }),
} satisfies Record<string, RouteDef>;

/** The run's event log live over a WebSocket: the SSE stream's twin, for clients that prefer one. */
export const runSocketRoutes = {
  streamRunEventsSocket: defineSocketRoute({
    operationId: 'streamRunEventsSocket',
    path: '/v1/runs/{run_id}/events/ws',
    tag: 'runs',
    auth: 'api_key',
    summary: "A run's events live over a WebSocket (one RunEvent JSON per text frame)",
    description:
      'The socket first replays the events after `after_seq`, then follows the run live, and closes with 1000 after the final status. Frames the client sends are ignored. A bad key, id or query, or an unknown run, is answered before the upgrade with the error envelope.',
    params: RunPathParams,
    query: RunStreamQuery,
    frames: 'json',
    serverMessage: RunEvent,
    closeCodes: {
      1000: 'the run ended and its final status was sent (reason `run ended`)',
      1001: 'the server is shutting down: reconnect with `after_seq` set to the last seq received',
      1011: 'the server failed: reconnect with `after_seq` set to the last seq received',
    },
    errors: [...readErrors],
  }),
} satisfies Record<string, SocketRouteDef>;
