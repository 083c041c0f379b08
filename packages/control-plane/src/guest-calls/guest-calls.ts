import { randomBytes } from 'node:crypto';
import { AppError } from '@cubicle/contract/errors';
import type { GuestOperation } from '@cubicle/contract/guest';
import { LiveClaimMemory } from '../claims/live-claim-memory.js';
import { nowOf, type Subscriber } from '../context.js';
import type { Deps } from '../resources.js';
import { findLiveGuest, liveGuestOrThrow } from '../guest/find-live-guest.js';
import { isClaimActive } from '../lifecycle/claim-liveness.js';
import { bodyOrThrow } from '../guest/guest-client.js';
import { guestCallWaitMs } from './guest-call-bounds.js';
import { serverTimingOf, type ApiCallTiming } from './guest-call-timing.js';
import {
  guestCallJobId,
  guestResultChannel,
  readOutcomeMessage,
  type ReceivedOutcome,
} from './guest-call-messages.js';

interface Waiter {
  resolve(outcome: ReceivedOutcome): void;
}

/** A guest's answer as the JSON text the worker checked against the operation's response schema. */
export interface CheckedJson {
  json: string;
  /** Where the call's time went, as a `Server-Timing` header value (serverTimingOf). */
  serverTiming: string;
}

/** An outcome with the API's own parts of its time. */
type TimedOutcome = ReceivedOutcome & { api: ApiCallTiming };

export interface GuestCallsOptions {
  /** A connection of its own: ioredis in subscriber mode can do nothing else. */
  subscriber: Subscriber;
  /** The BullMQ prefix; channels are scoped by it. */
  prefix: string;
  /**
   * Told the claim's time to first confirmed action (ms) when a call answered here was that
   * action (the worker stamped it: once per claim). The API's metrics observe it.
   */
  onFirstConfirmedAction?: (ms: number) => void;
}

/**
 * GuestCalls is the API side of driving a sandbox. A call is a `guest.call` job on the sandbox's
 * own lane (workers run one job of a lane at a time, so order is kept), and the answer comes
 * back over one pub/sub channel per API process: one subscriber connection, a map from job id to
 * waiter, the waiter registered before the job is enqueued so no answer can arrive unheard.
 * Nothing is retried: a call that outlives its bound is 504 `timeout`, and the worker will not
 * start it afterwards. What it keeps per call lives only while the call does; the one thing kept
 * per claim, the lane its calls go to, is forgotten when the claim ends (stats()).
 */
export class GuestCalls {
  private readonly replyTo = `api${randomBytes(6).toString('hex')}`;
  private readonly waiters = new Map<string, Waiter>();
  private readonly tails = new Map<string, Promise<void>>();
  /**
   * Claim → its tenant and sandbox, for the claim's later calls. A claim's sandbox never changes,
   * so a remembered route is never wrong; only whether the claim is still active can be, and the
   * worker decides that against the database before it delivers anything (run-guest-call). The
   * API's own lookup is then one round trip to Postgres a call does not need.
   */
  private readonly routes: LiveClaimMemory<{ tenantId: string; sandboxId: string }>;
  private seq = 0;
  private started: Promise<unknown> | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly options: GuestCallsOptions,
  ) {
    this.routes = new LiveClaimMemory({
      db: deps.db,
      subscriber: options.subscriber,
      prefix: options.prefix,
      now: deps.now,
    });
  }

  /**
   * start subscribes to this process's result channel and to the claim-end broadcast (routes);
   * calls await it, so it is safe to call early.
   */
  start(): Promise<unknown> {
    this.started ??= (async () => {
      const channel = guestResultChannel(this.options.prefix, this.replyTo);
      this.options.subscriber.on('message', (ch, message) => {
        if (ch === channel) this.deliver(message);
      });
      await Promise.all([this.options.subscriber.subscribe(channel), this.routes.start()]);
    })().catch((err: unknown) => {
      this.started = undefined; // the next call tries again
      throw err;
    });
    return this.started;
  }

  private deliver(message: string) {
    const outcome = readOutcomeMessage(message);
    if (!outcome) return;
    const waiter = this.waiters.get(outcome.job_id);
    if (!waiter) return; // its caller timed out already
    this.waiters.delete(outcome.job_id);
    waiter.resolve(outcome);
  }

  /**
   * sandboxOf answers the sandbox whose lane carries the claim's calls: remembered from an earlier
   * call of the same tenant, or looked up (activeSandboxOf) and remembered once start() has
   * subscribed to claim ends. A remembered claim that has ended since is refused by the worker
   * (claim_not_active), as the lookup would have refused it.
   */
  private async sandboxOf(tenantId: string, claimId: string): Promise<string> {
    const known = this.routes.get(claimId);
    if (known?.tenantId === tenantId) return known.sandboxId;
    const [sandboxId] = await Promise.all([this.activeSandboxOf(tenantId, claimId), this.start()]);
    this.routes.set(claimId, { tenantId, sandboxId });
    return sandboxId;
  }

  /**
   * rememberClaim records the sandbox of a claim this process has just made active, so that
   * claim's first call (an agent's first action) goes to its lane without a lookup
   * (activeSandboxOf). Kept once subscribed to claim ends (start), as a looked-up route is; the
   * worker still checks the claim before it delivers anything.
   */
  rememberClaim(
    tenantId: string,
    claim: { id: string; status: string; sandbox: { id: string } | null },
  ): void {
    const sandboxId = claim.sandbox?.id;
    if (!isClaimActive(claim.status) || !sandboxId) return;
    this.start().then(
      () => this.routes.set(claim.id, { tenantId, sandboxId }),
      () => undefined, // not subscribed: the first call looks the claim up, as before
    );
  }

  /**
   * activeSandboxOf answers the sandbox of the tenant's live claim, or not_found /
   * claim_not_active (findLiveGuest, without the token: the API only routes the call). The worker
   * looks the claim up again when it runs the call, so a claim ending in between is still refused.
   */
  async activeSandboxOf(tenantId: string, claimId: string): Promise<string> {
    const target = { tenantId, claimId, now: nowOf(this.deps) };
    const lookup = await findLiveGuest(this.deps.db, target, false);
    return liveGuestOrThrow(lookup, target).sandboxId;
  }

  /**
   * call runs one guest operation for the holder of `claimId` and answers the guest's 200 body;
   * guest errors are thrown as the same AppError the guest answered with.
   */
  async call(
    tenantId: string,
    claimId: string,
    operation: GuestOperation,
    request: Record<string, unknown>,
  ): Promise<unknown> {
    return bodyOf(await this.sendCall(tenantId, claimId, operation, request));
  }

  /**
   * callJson is call answering the 200 body as the JSON text the worker checked against the
   * operation's response schema and sent on as it was (readOutcomeMessage): a big answer (an
   * observe, a screenshot) is neither parsed nor written again on its way to the caller.
   */
  async callJson(
    tenantId: string,
    claimId: string,
    operation: GuestOperation,
    request: Record<string, unknown>,
  ): Promise<CheckedJson> {
    const outcome = await this.sendCall(tenantId, claimId, operation, request);
    const serverTiming = serverTimingOf(outcome.api, outcome.timing);
    if (outcome.status === 200 && outcome.bodyText !== undefined)
      return { json: outcome.bodyText, serverTiming };
    return { json: JSON.stringify(bodyOf(outcome)), serverTiming };
  }

  private sendCall(
    tenantId: string,
    claimId: string,
    operation: GuestOperation,
    request: Record<string, unknown>,
  ): Promise<TimedOutcome> {
    return this.send(tenantId, claimId, guestCallWaitMs(operation, request), (sandboxId, jobId) =>
      this.deps.queues.enqueue(
        'guest.call',
        { tenant_id: tenantId, claim_id: claimId, sandbox_id: sandboxId, operation, request },
        { jobId },
      ),
    );
  }

  /**
   * pause asks the worker to pause or resume the claim's desktop (a `claim.pause` job on the
   * sandbox's lane, after the calls queued before it) and answers its outcome.
   */
  async pause(
    tenantId: string,
    claimId: string,
    action: 'pause' | 'resume',
    boundMs: number,
    reason: 'api' | 'viewer' = 'api',
  ): Promise<unknown> {
    const outcome = await this.send(tenantId, claimId, boundMs, (sandboxId, jobId) =>
      this.deps.queues.enqueue(
        'claim.pause',
        { tenant_id: tenantId, claim_id: claimId, sandbox_id: sandboxId, action, reason },
        { jobId },
      ),
    );
    return bodyOf(outcome);
  }

  /**
   * send enqueues one job of the claim's lane (enqueue) and waits for its outcome (504 `timeout`
   * past `boundMs`); the caller reads its body (bodyOf).
   */
  private async send(
    tenantId: string,
    claimId: string,
    boundMs: number,
    enqueue: (sandboxId: string, jobId: string) => Promise<unknown>,
  ): Promise<TimedOutcome> {
    let jobId: string | undefined;
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    let enqueuedFrom = started;
    try {
      // Wrapped in an object: a returned promise would be flattened, and the chain would wait for the answer.
      const { waiting } = await this.inOrder(claimId, async () => {
        // sandboxOf has subscribed (start) before it answers: a remembered route implies it.
        const sandboxId = await this.sandboxOf(tenantId, claimId);
        const id = guestCallJobId(this.replyTo, ++this.seq);
        jobId = id;
        const waiting = new Promise<ReceivedOutcome | undefined>((resolve) => {
          this.waiters.set(id, { resolve });
          timer = setTimeout(() => resolve(undefined), boundMs);
        });
        enqueuedFrom = performance.now();
        await enqueue(sandboxId, id);
        return { waiting };
      });
      const enqueued = performance.now();
      const outcome = await waiting;
      if (outcome?.first_confirmed_action_ms !== undefined)
        this.options.onFirstConfirmedAction?.(outcome.first_confirmed_action_ms);
      if (!outcome)
        throw new AppError(
          'timeout',
          `the call did not finish within ${boundMs} ms; it may have been delivered: observe before retrying`,
        );
      // enqueue: from the call's arrival to its job in the lane (lookups and earlier calls of the
      // claim included); wait: from sending the job to its outcome here.
      const api = { enqueue: enqueued - started, wait: performance.now() - enqueuedFrom };
      return { ...outcome, api };
    } finally {
      clearTimeout(timer);
      if (jobId) this.waiters.delete(jobId);
    }
  }

  /**
   * inOrder runs the steps before enqueueing one call of a claim after those of the calls that
   * arrived before it in this process, so pipelined calls reach the sandbox's queue in arrival
   * order (the lookups of concurrent calls would otherwise race). Waiting for answers is not
   * serialized here: the queue does that.
   */
  private inOrder<T>(claimId: string, step: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(claimId) ?? Promise.resolve();
    const mine = previous.then(step);
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(claimId, tail);
    void tail.then(() => {
      if (this.tails.get(claimId) === tail) this.tails.delete(claimId);
    });
    return mine;
  }

  /** pending is the number of calls waiting for an answer (for shutdown and tests). */
  get pending(): number {
    return this.waiters.size;
  }

  /**
   * stats counts the per-call and per-claim entries this process holds: waiters and chains are
   * empty once no call is in flight, routes once the claims have ended (the scale test drives
   * 1,000 sandboxes and checks).
   */
  stats(): { waiters: number; claimChains: number; claimRoutes: number } {
    return {
      waiters: this.waiters.size,
      claimChains: this.tails.size,
      claimRoutes: this.routes.size,
    };
  }

  /** close stops the routes' periodic prune and forgets them (the subscriber is the caller's). */
  close(): Promise<void> {
    return this.routes.close();
  }
}

/**
 * bodyOf answers an outcome's 200 body (its text parsed when it came as text) or throws the
 * AppError its envelope carries (bodyOrThrow).
 */
function bodyOf(outcome: ReceivedOutcome): unknown {
  const body = outcome.bodyText !== undefined ? JSON.parse(outcome.bodyText) : outcome.body;
  return bodyOrThrow({ status: outcome.status, body }, 'the worker');
}
