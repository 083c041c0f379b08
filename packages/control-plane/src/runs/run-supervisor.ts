import { randomBytes } from 'node:crypto';
import { AppError } from '@cubicle/contract/errors';
import { sqlOf } from '@cubicle/db';
import { nowOf, type Subscriber } from '../context.js';
import { isClaimLive } from '../lifecycle/claim-liveness.js';
import { findLiveGuest } from '../guest/find-live-guest.js';
import { guestClientOf, type GuestClient } from '../guest/guest-client.js';
import { resumeForActivity } from '../pause/pause-lane.js';
import type { WorkerDeps } from '../resources.js';
import { viewerChannel } from '../viewer/viewer-events.js';
import { finishRun, type RunOutcome } from './finish-run.js';
import { LiveRun } from './live-run.js';
import { RunInput, runControlChannel, runInputKey } from './run-channels.js';
import type { RunDeps } from '../resources.js';
import { claimSecretsChannel, onClaimSecretsOpened } from '../secrets/claim-secrets-opened.js';
import { openClaimSecrets } from '../secrets/claim-redactor.js';
import { secretsForRun } from '../secrets/secrets-for-run.js';
import { deliverClaimSecrets } from '../secrets/sync-claim-secrets.js';
import { RunRedaction } from './run-redaction.js';
import type { RunRow } from '../repositories/runs-rows.js';
import { renewRunLeases, selectLostRuns, selectOrphanRuns, takeRun } from '../repositories/runs.js';

/** A worker renews the leases of the runs it holds this often… */
const TICK_MS = 1000;
/** …and a lease not renewed for this long means the worker is gone (its runs end worker_lost). */
export const RUN_LEASE_MS = 6000;
/** Queued runs nobody picked up after this long are enqueued again (a lost enqueue). */
const ORPHAN_AFTER_MS = 10_000;

export interface RunSupervisorOptions {
  /** The worker's resources: run events and input go through their `redis` under `prefix`. */
  deps: WorkerDeps & RunDeps;
  /** A connection of its own in subscriber mode (control nudges, claim ends). */
  subscriber: Subscriber;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * RunSupervisor is the worker's side of runs. `execute` (the `run.execute` job) takes a queued
 * run under a lease, starts it through the guest's shell stream and returns once the process is
 * running; the stream then lives here, not in the job. Every second it renews its runs' leases
 * and, from the same query, sees cancel requests and claims that ended (their runs are stopped
 * and end `cancelled` with reason `claim_ended`); a claim-end message makes that immediate. It
 * also ends the runs of workers whose lease lapsed: `failed`, reason `worker_lost`. A dead
 * worker's runs are not re-attached: its stream closed, and the guest kills a stream's process
 * group when the stream closes, so there is nothing left to attach to and nothing is replayed.
 */
export class RunSupervisor {
  readonly workerId = `wrk_${randomBytes(8).toString('hex')}`;
  private readonly live = new Map<string, LiveRun>();
  private readonly inputChains = new Map<string, Promise<void>>();
  /** The redaction of each live run, by claim: a claim's new secrets widen all of them. */
  private readonly redactions = new Map<string, Map<string, RunRedaction>>();
  private stopHearing: (() => void) | undefined;
  private readonly runDeps: RunDeps;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private ticks = 0;
  private closed = false;

  constructor(private readonly options: RunSupervisorOptions) {
    this.runDeps = options.deps;
  }

  async start(): Promise<void> {
    const control = runControlChannel(this.options.deps.prefix);
    const claims = viewerChannel(this.options.deps.prefix);
    const secrets = claimSecretsChannel(this.options.deps.prefix);
    // Secrets this process opens for a claim reach its runs' redaction before the desktop.
    this.stopHearing = onClaimSecretsOpened((_tenantId, claimId, values) => {
      for (const redaction of this.redactions.get(claimId)?.values() ?? []) redaction.add(values);
    });
    this.options.subscriber.on('message', (channel, message) => {
      if (channel === control) {
        if (this.live.has(message)) this.drainInput(message);
      } else if (channel === claims && message.includes('"claim"')) {
        void this.tick();
      } else if (channel === secrets) {
        void this.rereadClaimSecrets(message);
      }
    });
    await this.options.subscriber.subscribe(control, claims, secrets);
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  /**
   * rereadClaimSecrets widens the redaction of this worker's runs of a claim whose secrets
   * another worker is about to write (claimSecretsChannel): the values are read here, never sent.
   */
  private async rereadClaimSecrets(message: string) {
    let target: { tenant_id: string; claim_id: string };
    try {
      target = JSON.parse(message) as typeof target;
    } catch {
      return;
    }
    const runs = this.redactions.get(target.claim_id);
    if (!runs || runs.size === 0) return;
    try {
      const values = await openClaimSecrets(
        { db: this.runDeps.db, keyring: this.options.deps.keyring },
        target.tenant_id,
        target.claim_id,
      );
      for (const redaction of runs.values()) redaction.add(values);
    } catch (err) {
      this.options.log?.warn(
        { claimId: target.claim_id, err: (err as Error).message },
        "could not read a claim's new secrets for its runs' redaction",
      );
    }
  }

  /** The runs whose streams this worker holds. */
  get held(): string[] {
    return [...this.live.keys()];
  }

  /**
   * execute starts one queued run. Idempotent: a run that is not queued, or that another worker
   * took, is left alone, so a job delivered twice (a stalled job) starts nothing twice.
   */
  async execute(tenantId: string, runId: string): Promise<{ started: boolean }> {
    if (this.closed) throw new Error('the run supervisor is closing');
    const row = await sqlOf(this.runDeps.db).row(
      takeRun,
      runId,
      tenantId,
      this.workerId,
      RUN_LEASE_MS,
    );
    if (!row) return { started: false };
    try {
      return await this.startTaken(tenantId, row);
    } catch (err) {
      // Taken but not started: end it now rather than leave it to the lease sweep.
      this.live.get(runId)?.abandon();
      await finishRun(this.runDeps, runId, {
        status: 'failed',
        reason: 'start_failed',
        detail: 'the worker could not start the run',
      });
      throw err;
    }
  }

  private async startTaken(tenantId: string, row: RunRow): Promise<{ started: boolean }> {
    const runId = row.id;
    const fail = async (outcome: RunOutcome) => {
      await finishRun(this.runDeps, runId, outcome);
      return { started: false };
    };
    if (row.cancel_requested_at) return fail({ status: 'cancelled', reason: 'cancelled' });

    // The claim's guest, only while the claim is live (findLiveGuest); the client opens its
    // token and, later, the peer-checked shell stream.
    const lookup = await findLiveGuest(
      this.runDeps.db,
      { tenantId, claimId: row.claim_id, now: nowOf(this.runDeps) },
      true,
    );
    if (lookup.kind === 'not_found' || lookup.kind === 'not_live')
      return fail({
        status: 'cancelled',
        reason: 'claim_ended',
        detail: (lookup.kind === 'not_live' ? lookup.releaseReason : null) ?? 'expired',
      });
    let guest: GuestClient;
    try {
      if (lookup.kind === 'sandbox_gone')
        throw new AppError('backend_unavailable', 'the sandbox has no guest driver endpoint');
      guest = guestClientOf(this.options.deps.keyring, lookup.guest);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return fail({ status: 'failed', reason: 'start_failed', detail: err.message });
    }
    const { sandboxId, hasSecrets } = guest.guest;
    // A paused desktop (its guest frozen too) is resumed before the run reaches it.
    await resumeForActivity(
      this.options.deps,
      { tenantId, claimId: row.claim_id, sandboxId },
      'run',
    );

    // Values are read here, at start, and live only in this process's memory: the guest gets
    // the named ones as this run's environment. The redaction covers every secret of the claim,
    // named or not (any process in the sandbox can read the secrets directory), and grows with
    // secrets added while the run goes (registered before the delivery, which announces them).
    // The claim's own secrets are also written as files first (the claim request queued none).
    const ctx = { db: this.runDeps.db, keyring: this.options.deps.keyring };
    const redaction = new RunRedaction([]);
    let byClaim = this.redactions.get(row.claim_id);
    if (!byClaim) this.redactions.set(row.claim_id, (byClaim = new Map()));
    byClaim.set(runId, redaction);
    let secrets: { name: string; value: string }[] = [];
    try {
      if (hasSecrets) {
        redaction.add(await openClaimSecrets(ctx, tenantId, row.claim_id));
        await deliverClaimSecrets(this.options.deps, {
          tenantId,
          claimId: row.claim_id,
          sandboxId,
        });
      }
      secrets = await secretsForRun(ctx, tenantId, row.claim_id, row.secret_names);
      redaction.add(secrets);
    } catch (err) {
      this.forgetRedaction(row.claim_id, runId);
      return fail({ status: 'failed', reason: 'start_failed', detail: (err as Error).message });
    }
    const run = new LiveRun({
      deps: this.runDeps,
      row,
      workerId: this.workerId,
      guest,
      // Secrets last: a run's own env cannot shadow a secret it asked for.
      env: { ...row.env, ...Object.fromEntries(secrets.map((s) => [s.name, s.value])) },
      redactor: () => redaction.stream(),
      onEnded: (ended) => {
        this.live.delete(ended.id);
        this.forgetRedaction(ended.claimId, ended.id);
        void this.options.deps.redis
          .del(runInputKey(this.options.deps.prefix, ended.id))
          .catch(() => 0);
      },
    });
    this.live.set(runId, run);
    run.open();
    this.drainInput(runId);
    return { started: await run.started };
  }

  private forgetRedaction(claimId: string, runId: string) {
    const byClaim = this.redactions.get(claimId);
    byClaim?.delete(runId);
    if (byClaim?.size === 0) this.redactions.delete(claimId);
  }

  /** drainInput forwards the run's queued input in order (one drain at a time per run). */
  private drainInput(runId: string) {
    const previous = this.inputChains.get(runId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const key = runInputKey(this.options.deps.prefix, runId);
      for (;;) {
        const run = this.live.get(runId);
        if (!run) return;
        const items = await this.options.deps.redis.lpop(key, 100);
        if (!items || items.length === 0) return;
        for (const item of items) {
          const input = RunInput.safeParse(JSON.parse(item));
          if (!input.success) continue;
          const value = input.data;
          if (value.type === 'cancel') run.requestEnd({ kind: 'cancel' }, 'SIGINT', value.grace_ms);
          else run.write(value);
        }
      }
    });
    const settled = next.catch((err: unknown) =>
      this.options.log?.warn({ runId, err: (err as Error).message }, 'run input not delivered'),
    );
    this.inputChains.set(runId, settled);
    void settled.then(() => {
      if (this.inputChains.get(runId) === settled) this.inputChains.delete(runId);
    });
  }

  /** tick renews leases, honours cancels and claim ends, and ends lost workers' runs. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        await this.renew();
        await this.sweepLost();
        if (++this.ticks % 10 === 0) await this.requeueOrphans();
      } catch (err) {
        this.options.log?.warn({ err: (err as Error).message }, 'run supervisor tick failed');
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  private async renew() {
    const ids = [...this.live.keys()];
    if (ids.length === 0) return;
    const rows = await sqlOf(this.runDeps.db).rows(
      renewRunLeases,
      ids,
      this.workerId,
      RUN_LEASE_MS,
    );
    const kept = new Set(rows.map((r) => r.id));
    for (const id of ids) if (!kept.has(id)) this.live.get(id)?.abandon();
    const now = nowOf(this.runDeps);
    for (const row of rows) {
      const run = this.live.get(row.id);
      if (!run || run.endRequested) continue;
      if (!isClaimLive({ status: row.claim_status, expiresAt: row.expires_at }, now))
        run.requestEnd({ kind: 'claim_ended', detail: row.release_reason ?? 'expired' });
      else if (row.cancel_requested_at)
        run.requestEnd({ kind: 'cancel' }, 'SIGINT', row.cancel_grace_ms ?? undefined);
    }
  }

  private async sweepLost() {
    const rows = await sqlOf(this.runDeps.db).rows(selectLostRuns);
    for (const { id } of rows)
      await finishRun(
        this.runDeps,
        id,
        {
          status: 'failed',
          reason: 'worker_lost',
          detail: 'the worker holding the run stopped; the guest ended its process group',
        },
        [],
        'lease_expired',
      );
  }

  private async requeueOrphans() {
    const rows = await sqlOf(this.runDeps.db).rows(selectOrphanRuns, ORPHAN_AFTER_MS);
    for (const r of rows)
      await this.runDeps.queues.enqueue(
        'run.execute',
        { tenant_id: r.tenant_id, run_id: r.id },
        { jobId: `${r.id}-requeued-${Date.now()}` },
      );
  }

  /**
   * close stops taking runs and ends the ones held here as `worker_lost` (their streams close
   * with this process, and the guest kills their process groups): a worker that stops on
   * purpose says so at once instead of leaving the lease to lapse.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.stopHearing?.();
    await this.ticking;
    const runs = [...this.live.values()];
    for (const run of runs) {
      await finishRun(this.runDeps, run.id, {
        status: 'failed',
        reason: 'worker_lost',
        detail: 'the worker holding the run shut down',
      }).catch(() => undefined);
      run.abandon();
    }
  }
}
