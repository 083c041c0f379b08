import { z } from 'zod';
import { ClaimId, PoolId, RunId, SandboxId, TenantId, WebhookDeliveryId } from '../api/common.js';
import { GuestRoutes } from '../guest/routes.js';

const GuestOperation = z.enum(
  Object.keys(GuestRoutes) as [keyof typeof GuestRoutes, ...(keyof typeof GuestRoutes)[]],
);

/** JobSpec is one entry of the catalog: where the job runs, what it carries, how it is retried. */
export interface JobSpec<P extends z.ZodType = z.ZodType> {
  /** BullMQ queue name; `{sandbox_id}` means one queue per sandbox (order kept per sandbox). */
  queue: string;
  payload: P;
  /** Total attempts including the first; 1 means never retried automatically. */
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay_ms: number } | null;
  /** The handler is abandoned (and the attempt failed) after this long. */
  timeout_ms: number;
  description: string;
}

function job<P extends z.ZodType>(spec: JobSpec<P>): JobSpec<P> {
  return spec;
}

/**
 * Jobs maps each namespaced job name to its spec. Payloads carry ids only, never secrets: a
 * handler re-reads the database, so a retried or late job acts on current state.
 */
export const Jobs = {
  'sandbox.provision': job({
    queue: 'sandboxes',
    payload: z.strictObject({ tenant_id: TenantId, sandbox_id: SandboxId }),
    attempts: 3,
    backoff: { type: 'exponential', delay_ms: 1000 },
    timeout_ms: 300_000,
    description:
      'Create the backend object for a provisioning sandbox and wait until its guest answers.',
  }),
  'sandbox.destroy': job({
    queue: 'sandboxes',
    payload: z.strictObject({ tenant_id: TenantId, sandbox_id: SandboxId }),
    attempts: 10,
    backoff: { type: 'exponential', delay_ms: 500 },
    timeout_ms: 120_000,
    description: 'Destroy a releasing or failed sandbox; idempotent.',
  }),
  'claims.reclaim': job({
    queue: 'reclaim',
    payload: z.strictObject({}),
    attempts: 1,
    backoff: null,
    timeout_ms: 30_000,
    description:
      'Release claims past expires_at, max_expires_at or their idle window (state is in the database).',
  }),
  'pools.sweep': job({
    queue: 'reconcile',
    payload: z.strictObject({}),
    attempts: 1,
    backoff: null,
    timeout_ms: 120_000,
    description:
      'Periodic: reconcile every pool and compare each backend with the database (orphans destroyed, lost sandboxes failed).',
  }),
  'pool.reconcile': job({
    queue: 'reconcile',
    payload: z.strictObject({ tenant_id: TenantId, pool_id: PoolId }),
    attempts: 3,
    backoff: { type: 'exponential', delay_ms: 1000 },
    timeout_ms: 60_000,
    description:
      'Compare a pool with its backend: destroy orphans, replace lost sandboxes, keep min ≤ size ≤ max.',
  }),
  'guest.call': job({
    queue: 'guest-{sandbox_id}',
    payload: z.strictObject({
      tenant_id: TenantId,
      claim_id: ClaimId,
      sandbox_id: SandboxId,
      /** One guest protocol operation (a key of GuestRoutes); its request is validated by the guest's schema. */
      operation: GuestOperation,
      request: z.record(z.string(), z.unknown()),
    }),
    // Never retried: an action may have been delivered before a failure, and replaying input is unsafe.
    attempts: 1,
    backoff: null,
    timeout_ms: 120_000,
    description:
      "Forward one guest protocol call to the sandbox's guest driver and store its result.",
  }),
  'claim.pause': job({
    queue: 'guest-{sandbox_id}',
    payload: z.strictObject({
      tenant_id: TenantId,
      claim_id: ClaimId,
      sandbox_id: SandboxId,
      /** `pause`, `resume`, or `idle_pause`: pause only if the claim is still idle when it runs. */
      action: z.enum(['pause', 'resume', 'idle_pause']),
      /** Who asked for a resume: the API (`api`) or a viewer connecting (`viewer`). */
      reason: z.enum(['api', 'viewer']).optional(),
    }),
    // Pause and resume are idempotent, but the caller waits for this one answer.
    attempts: 1,
    backoff: null,
    timeout_ms: 30_000,
    description:
      "Freeze or thaw a claim's desktop through its backend; on the sandbox's queue, so it runs after the calls queued before it.",
  }),
  'secrets.sync': job({
    queue: 'guest-{sandbox_id}',
    // Ids only: the worker reads and decrypts the claim's secrets when the job runs.
    payload: z.strictObject({
      tenant_id: TenantId,
      claim_id: ClaimId,
      sandbox_id: SandboxId,
    }),
    // Idempotent (it writes the claim's current set and removes the rest), so safe to retry.
    attempts: 3,
    backoff: { type: 'exponential', delay_ms: 500 },
    timeout_ms: 30_000,
    description:
      "Write the claim's secrets into its sandbox's secrets tmpfs and remove files of deleted ones; on the sandbox's queue, so later guest calls see them.",
  }),
  'run.execute': job({
    queue: 'runs',
    payload: z.strictObject({ tenant_id: TenantId, run_id: RunId }),
    attempts: 1,
    backoff: null,
    timeout_ms: 86_400_000,
    description: 'Execute an agent run in its sandbox with its secrets, streaming redacted events.',
  }),
  'webhook.deliver': job({
    queue: 'webhooks',
    payload: z.strictObject({
      tenant_id: TenantId,
      delivery_id: WebhookDeliveryId,
      /** The attempt this job makes (attempts already made + 1); a stale job finds it taken and stops. */
      attempt: z.number().int().min(1),
    }),
    // Retried by the delivery itself (exponential, for 24 h, next attempt stored in the row).
    attempts: 1,
    backoff: null,
    timeout_ms: 60_000,
    description:
      'POST one signed webhook delivery to its endpoint (after the address check); schedule the next attempt on failure.',
  }),
  'webhooks.relay': job({
    queue: 'webhooks',
    payload: z.strictObject({}),
    attempts: 1,
    backoff: null,
    timeout_ms: 30_000,
    description:
      'Periodic: enqueue every webhook delivery that is due and not in flight (the outbox in PostgreSQL is the truth).',
  }),
  'usage.rollup': job({
    queue: 'usage',
    payload: z.strictObject({}),
    // The next scheduled run recomputes the same hours; a retry would only duplicate it.
    attempts: 1,
    backoff: null,
    timeout_ms: 600_000,
    description:
      'Periodic: recompute whole hours of usage per tenant and pool from claim, sandbox and run times (idempotent).',
  }),
} as const satisfies Record<string, JobSpec>;

export type JobName = keyof typeof Jobs;
export type JobPayload<N extends JobName> = z.infer<(typeof Jobs)[N]['payload']>;
export const JobNames = Object.keys(Jobs) as [JobName, ...JobName[]];

/** queueFor resolves a job's queue name, filling `{sandbox_id}` from the payload. */
export function queueFor<N extends JobName>(name: N, payload: JobPayload<N>): string {
  const queue: string = Jobs[name].queue;
  if (!queue.includes('{sandbox_id}')) return queue;
  const sandboxId = (payload as { sandbox_id?: string }).sandbox_id;
  if (!sandboxId) throw new Error(`job ${name} needs sandbox_id to pick its queue`);
  return queue.replace('{sandbox_id}', sandboxId);
}

/** parseJobPayload validates a payload against the catalog; callers map failure to UnrecoverableError. */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  return Jobs[name].payload.parse(data) as JobPayload<N>;
}
