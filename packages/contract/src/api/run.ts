import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, listQueryOf, RunId, Timestamp } from './common.js';
import { SecretName } from './secret.js';

export const RunStatus = named(
  'RunStatus',
  z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
);
export type RunStatus = z.infer<typeof RunStatus>;

/** isFinalRunStatus: a run in one of these states never changes again. */
export const isFinalRunStatus = (status: RunStatus) =>
  status === 'succeeded' || status === 'failed' || status === 'cancelled';

/**
 * RunEndReason says why a run ended: `exited` (its process exited by itself: `exit_code` says
 * how), `signaled` (a signal Cubicle did not send killed it), `timeout` (its `timeout_seconds`
 * passed: the process group was killed), `cancelled` (POST …/cancel), `claim_ended` (its claim
 * was released or expired: `end_detail` holds the claim's release reason), `worker_lost` (the
 * worker holding its stream died; the guest kills the process group when that stream closes, and
 * the run is never replayed), `guest_lost` (the sandbox's guest driver closed the stream without
 * an exit: the desktop stopped), `start_failed` (the program could not be started: `end_detail`).
 */
export const RunEndReason = named(
  'RunEndReason',
  z.enum([
    'exited',
    'signaled',
    'timeout',
    'cancelled',
    'claim_ended',
    'worker_lost',
    'guest_lost',
    'start_failed',
  ]),
);
export type RunEndReason = z.infer<typeof RunEndReason>;

/**
 * CreateRunRequest starts an agent run in the claimed sandbox. `secrets` names per-claim secrets
 * to expose as environment variables; their values are redacted from every run event.
 */
export const CreateRunRequest = named(
  'CreateRunRequest',
  z.strictObject({
    argv: z.array(text().min(1).max(32_768)).min(1).max(1024),
    /** An absolute path in the sandbox (the guest resolves nothing relative). */
    cwd: text().min(1).max(4096).regex(/^\//, 'must be an absolute path').optional(),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), text().max(32_768)).default({}),
    secrets: z.array(SecretName).max(64).default([]),
    timeout_seconds: z.number().int().min(1).max(86_400).default(3600),
  }),
);
export type CreateRunRequest = z.infer<typeof CreateRunRequest>;

export const Run = named(
  'Run',
  z.strictObject({
    id: RunId,
    claim_id: ClaimId,
    status: RunStatus,
    argv: z.array(z.string()),
    cwd: z.string().nullable(),
    secret_names: z.array(SecretName),
    timeout_seconds: z.number().int(),
    exit_code: z.number().int().nullable(),
    /** The signal that ended the process, when one did (e.g. `SIGKILL` after a timeout). */
    signal: z.string().nullable(),
    /** Why the run ended; null while it is queued or running. */
    end_reason: RunEndReason.nullable(),
    /** More about the end: the claim's release reason, or why the start failed. */
    end_detail: z.string().nullable(),
    /** The seq of the run's last event so far (a reader that has it is up to date). */
    last_seq: z.number().int().min(0),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
  }),
);
export type Run = z.infer<typeof Run>;

/**
 * RunEventType: `status` (data: `{status, reason?, detail?, pid?}`; the first event of every run
 * is `queued`, the last a final status), `stdout` / `stderr` (data: `{text}`, secret values
 * replaced by `[secret:NAME]`), `exit` (data: `{exit_code, signal, timed_out, duration_ms}`).
 * `action_result` and `log` are reserved.
 */
export const RunEventType = named(
  'RunEventType',
  z.enum(['status', 'stdout', 'stderr', 'exit', 'action_result', 'log']),
);
export type RunEventType = z.infer<typeof RunEventType>;

/** RunEvent: `seq` is dense per run, so a reader resumes with `?after_seq=`. */
export const RunEvent = named(
  'RunEvent',
  z.strictObject({
    run_id: RunId,
    seq: z.number().int().min(1),
    type: RunEventType,
    data: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  }),
);
export type RunEvent = z.infer<typeof RunEvent>;

/** RunEventPage is one page of a run's events; `next_after_seq` resumes after it. */
export const RunEventPage = named(
  'RunEventPage',
  z.strictObject({
    data: z.array(RunEvent),
    /** Pass as `after_seq` for the next page (the last seq returned, or the one asked for). */
    next_after_seq: z.number().int().min(0),
    /** The run has ended and every event up to its last was returned. */
    complete: z.boolean(),
  }),
);
export type RunEventPage = z.infer<typeof RunEventPage>;

/** RunStdinRequest writes to the run's stdin (`eof` closes it afterwards). */
export const RunStdinRequest = named(
  'RunStdinRequest',
  z.strictObject({
    data: z
      .string()
      .max(1024 * 1024)
      .default(''),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    eof: z.boolean().default(false),
  }),
);
export type RunStdinRequest = z.infer<typeof RunStdinRequest>;

/** RunCancelRequest: SIGINT to the process group, then SIGKILL after `grace_seconds`. */
export const RunCancelRequest = named(
  'RunCancelRequest',
  z.strictObject({ grace_seconds: z.number().int().min(0).max(60).default(2) }).default({
    grace_seconds: 2,
  }),
);
export type RunCancelRequest = z.infer<typeof RunCancelRequest>;

/** RunStreamQuery: the WebSocket and SSE streams resume after `after_seq` (or `Last-Event-ID`). */
export const RunStreamQuery = z.strictObject({
  after_seq: z.coerce.number().int().min(0).optional(),
});

/** RunListQuery pages the tenant's runs across claims, newest first; `status` keeps one state. */
export const RunListQuery = z.strictObject({
  ...listQueryOf(RunId).shape,
  status: RunStatus.optional(),
});
export type RunListQuery = z.infer<typeof RunListQuery>;
