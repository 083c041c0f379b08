import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, RunId, Timestamp } from './common.js';
import { SecretName } from './secret.js';

export const RunStatus = named(
  'RunStatus',
  z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
);
export type RunStatus = z.infer<typeof RunStatus>;

/**
 * CreateRunRequest starts an agent run in the claimed sandbox. `secrets` names per-claim secrets
 * to expose as environment variables; their values are redacted from every run event.
 */
export const CreateRunRequest = named(
  'CreateRunRequest',
  z.strictObject({
    argv: z.array(text().min(1).max(32_768)).min(1).max(1024),
    cwd: text().max(4096).optional(),
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
    secret_names: z.array(SecretName),
    exit_code: z.number().int().nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    finished_at: Timestamp.nullable(),
  }),
);
export type Run = z.infer<typeof Run>;

export const RunEventType = named(
  'RunEventType',
  z.enum(['status', 'stdout', 'stderr', 'action_result', 'log']),
);

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
