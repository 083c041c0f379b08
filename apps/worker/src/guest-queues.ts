import {
  LiveClaimMemory,
  answerGuestCallJob,
  answerLostGuestCall,
  answerPauseJob,
  resumeForActivity,
  resumePausedClaim,
  deliverOnAttach,
  syncClaimSecrets,
  type WorkerDeps,
} from '@cubicle/control-plane';
import { warmGuestSchemas } from '@cubicle/contract/guest';
import { dispatchJob, LaneDispatcher, type TakenJob } from '@cubicle/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ClaimMirror } from './claim-mirror.js';

export interface GuestQueuesOptions {
  /** Shared non-blocking connection: lane scripts and answers (the dispatcher duplicates it once to block). */
  connection: Redis;
  /** A connection of its own, put in subscriber mode for attach requests (claim mirroring). */
  subscriber: Redis;
  prefix: string;
  log: Logger;
  /** Guest calls this process runs at once (each on a different sandbox); 64 by default. */
  concurrency?: number;
  /** The safety net of claim mirroring: claimed sandboxes are looked up this often. */
  scanIntervalMs?: number;
  /** Told of each job's end (metrics). */
  observe?: (job: string, outcome: 'completed' | 'failed', seconds: number) => void;
}

/**
 * GuestQueues runs the sandboxes' lanes in this worker process: every sandbox's guest calls and
 * secrets deliveries, one at a time and in order per sandbox, in parallel across sandboxes, with
 * two Redis connections whatever the number of sandboxes (LaneDispatcher, @cubicle/queue). Any
 * worker process may run any sandbox's next job, so nothing here is per sandbox except the jobs
 * running right now; claims are mirrored onto backends that want it by ClaimMirror.
 */
export class GuestQueues {
  private readonly dispatcher: LaneDispatcher;
  private readonly mirror: ClaimMirror;
  /** Claims whose secrets this process wrote before running their first call (pruned at claim end). */
  private readonly secretsDelivered: LiveClaimMemory<true>;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: GuestQueuesOptions,
  ) {
    this.dispatcher = new LaneDispatcher({
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 64,
      handler: (job) => this.process(job),
      onFailed: (job, err) =>
        options.log.warn(
          { jobId: job.id, job: job.name, err: (err as Error).message },
          'job failed',
        ),
      onLost: ({ lane, jobId }) => {
        options.log.warn(
          { sandboxId: lane, jobId },
          'a guest job was lost with its worker; not run again',
        );
        void answerLostGuestCall({ publisher: options.connection, prefix: options.prefix }, jobId);
      },
      onError: (err) =>
        options.log.warn({ err: (err as Error).message }, 'guest lanes: redis error'),
    });
    this.mirror = new ClaimMirror(deps, {
      subscriber: options.subscriber,
      prefix: options.prefix,
      log: options.log,
      ...(options.scanIntervalMs ? { scanIntervalMs: options.scanIntervalMs } : {}),
    });
    this.secretsDelivered = new LiveClaimMemory({
      db: deps.db,
      subscriber: options.subscriber,
      prefix: options.prefix,
      onError: (err) =>
        options.log.warn({ err: (err as Error).message }, 'delivered claims: prune failed'),
    });
  }

  async start(): Promise<void> {
    await this.mirror.start();
    await this.secretsDelivered.start();
    this.dispatcher.start();
    // The answers' schemas are built now, not inside the first call (warmGuestSchemas).
    setImmediate(() => warmGuestSchemas());
  }

  /**
   * process runs one job of a sandbox's lane: a guest call (its answer is published to the API
   * process waiting for it) or a secrets delivery (on the lane so later calls see the files).
   */
  private async process(job: TakenJob): Promise<unknown> {
    const started = Date.now();
    let outcome: 'completed' | 'failed' = 'failed';
    // Answers go out with the lane's release (LaneReply): the caller's next call finds it free.
    const answerTo = {
      publisher: this.options.connection,
      prefix: this.options.prefix,
      isReplyViaLane: true,
    };
    if (job.name === 'claim.pause') {
      // Pause and resume themselves: nothing reaches the guest (it may be frozen).
      const result = await answerPauseJob(this.deps, answerTo, job);
      this.options.observe?.(job.name, 'completed', (Date.now() - started) / 1000);
      return result;
    }
    // A secrets delivery reaches the guest: a paused desktop is resumed first (and it counts as
    // activity for auto-pause). A guest call does the same, and writes the claim's secrets before
    // its first call, in its own lookup (reachDriveTarget: one statement in the common case).
    // A failure is left to the job's own answer.
    if (job.name === 'secrets.sync') await this.resumeIfPaused(job);
    try {
      const result =
        job.name === 'secrets.sync'
          ? await dispatchJob({ 'secrets.sync': (p) => syncClaimSecrets(this.deps, p) }, job)
          : await answerGuestCallJob(
              this.deps,
              {
                ...answerTo,
                onError: (err) =>
                  this.options.log.error(
                    { jobId: job.id, err: (err as Error).message },
                    'guest call failed',
                  ),
                deliverSecrets: (guest) => this.deliverSecretsOnce(guest),
                resumePaused: (target) => resumePausedClaim(this.deps, target, 'drive'),
              },
              job,
            );
      outcome = 'completed';
      return result;
    } finally {
      // Nothing of the job rests in Redis once taken (typed text included): no rewrite needed.
      this.options.observe?.(job.name, outcome, (Date.now() - started) / 1000);
    }
  }

  /**
   * resumeIfPaused is the hook every driving call passes through (resumeForActivity): the
   * claim's activity is recorded and a paused desktop thawed before the job talks to its guest.
   */
  private async resumeIfPaused(job: TakenJob): Promise<void> {
    const {
      tenant_id: tenantId,
      sandbox_id: sandboxId,
      claim_id: claimId,
    } = job.data as {
      tenant_id?: unknown;
      sandbox_id?: unknown;
      claim_id?: unknown;
    };
    if (
      typeof tenantId !== 'string' ||
      typeof sandboxId !== 'string' ||
      typeof claimId !== 'string'
    )
      return;
    try {
      await resumeForActivity(this.deps, { tenantId, claimId, sandboxId }, 'drive');
    } catch (err) {
      this.options.log.warn(
        { sandboxId, err: (err as Error).message },
        'paused desktop not resumed',
      );
    }
  }

  /**
   * deliverSecretsOnce writes a claim's secrets into its desktop before the first call this
   * process runs for it (asked only for a claim that holds secrets): the claim request stored them
   * without queueing a delivery (the warm hit stays one batched INSERT more than a plain claim).
   * The memo is per claim and forgotten when the claim ends (LiveClaimMemory). A failure is
   * logged and the call still runs (its caller waits for an answer); the next call tries again.
   * True when it wrote just now.
   */
  private async deliverSecretsOnce(guest: {
    sandboxId: string;
    claimId: string;
  }): Promise<boolean> {
    if (this.secretsDelivered.has(guest.claimId)) return false;
    try {
      await deliverOnAttach(this.deps, guest.sandboxId);
      this.secretsDelivered.set(guest.claimId, true);
      return true;
    } catch (err) {
      this.options.log.warn(
        { sandboxId: guest.sandboxId, err: (err as Error).message },
        'secrets not delivered',
      );
      return false;
    }
  }

  /** stats counts what this process holds per sandbox: running jobs, mirrored and delivered claims. */
  stats(): { running: number; mirrored: number; secretsDelivered: number } {
    return {
      running: this.dispatcher.running,
      mirrored: this.mirror.size,
      secretsDelivered: this.secretsDelivered.size,
    };
  }

  /** close stops taking jobs and waits for the running ones to end. */
  async close(): Promise<void> {
    await this.mirror.close();
    await this.dispatcher.close();
    await this.secretsDelivered.close();
  }
}
