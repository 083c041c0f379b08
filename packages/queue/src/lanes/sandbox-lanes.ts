import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { laneKeys, runLaneScript } from './lane-scripts.js';

/** LaneJob is what a lane holds: a catalog job (name and validated payload) and when it was queued. */
export interface LaneJob {
  id: string;
  name: string;
  data: unknown;
  /** Enqueue time, ms since the epoch (bounds such as a guest call's deadline start here). */
  timestamp: number;
  /** Runs in all, including the first; the dispatcher retries in place, holding the lane. */
  attempts: number;
  backoffMs: number;
}

/**
 * SandboxLanes is the producer side of per-sandbox job lanes: one FIFO list per sandbox in
 * Redis, run one job at a time in order by any worker process's LaneDispatcher. It replaces a
 * BullMQ queue (and so a BullMQ Worker, with its own blocking connection) per sandbox: a
 * process's Redis connections no longer grow with the sandboxes it serves.
 */
export class SandboxLanes {
  readonly keys: ReturnType<typeof laneKeys>;

  constructor(
    private readonly redis: Redis,
    readonly prefix: string = 'cubicle',
  ) {
    this.keys = laneKeys(prefix);
  }

  /** push appends a job to the sandbox's lane; it runs after every job pushed before it. */
  async push(lane: string, job: LaneJob): Promise<void> {
    const { ready, active, marker } = this.keys;
    await runLaneScript(
      this.redis,
      'PUSH',
      [ready, active, marker],
      [this.prefix, lane, JSON.stringify(job)],
    );
  }

  /** drop deletes the jobs still waiting in a sandbox's lane (its sandbox is released or gone). */
  async drop(lane: string): Promise<number> {
    return Number(await runLaneScript(this.redis, 'DROP', [this.keys.ready], [this.prefix, lane]));
  }

  /** depth is the number of jobs waiting in a lane (not counting one that runs). */
  depth(lane: string): Promise<number> {
    return this.redis.llen(`${this.prefix}:lanes:q:${lane}`);
  }

  /** running is how many lanes have a job running right now, across every process. */
  running(): Promise<number> {
    return this.redis.hlen(this.keys.active);
  }
}

/**
 * LaneReply is a message a handler's job answers with (`{ laneReply }` in its result): the
 * dispatcher publishes it in the same script that frees the lane, so whoever the message wakes
 * finds the lane free already (its next job is not held up by the previous one's release), and
 * the end of a job costs one round trip to Redis instead of two.
 */
export interface LaneReply {
  channel: string;
  message: string;
}

const laneReplyOf = (result: unknown): LaneReply | undefined => {
  const reply = (result as { laneReply?: LaneReply } | null | undefined)?.laneReply;
  return typeof reply?.channel === 'string' && typeof reply.message === 'string'
    ? reply
    : undefined;
};

/** A job handed to a dispatcher's handler, with the lane it came from. */
export interface TakenJob extends LaneJob {
  lane: string;
}

export interface LaneDispatcherOptions {
  /** Non-blocking commands (shared with the rest of the process). */
  connection: Redis;
  prefix?: string;
  /** Jobs of different lanes this process runs at once. */
  concurrency?: number;
  /** A lane whose holder has not renewed for this long is freed (its job is not run again). */
  leaseMs?: number;
  /** Runs a job; a result with a `laneReply` is published as the lane is freed (LaneReply). */
  handler: (job: TakenJob) => Promise<unknown>;
  /** Told of a job that threw (after its attempts) — the handler should answer its own failures. */
  onFailed?: (job: TakenJob, err: unknown) => void;
  /** Told of jobs lost because their holder stopped renewing (a killed worker); their lanes are freed. */
  onLost?: (lost: { lane: string; jobId: string; holder: string }) => void;
  onError?: (err: unknown) => void;
}

/**
 * LaneDispatcher runs sandbox lanes in one process with a constant number of Redis connections
 * (the shared one plus one of its own for the blocking wait), however many sandboxes there are.
 * Guarantees, all decided inside Redis scripts:
 * - one at a time and in order per sandbox: a lane is taken with its head job and stays held
 *   (in `active`) until that job ends, in whatever process it runs;
 * - parallel across sandboxes: up to `concurrency` lanes per process, any number of processes;
 * - never run twice: a job leaves its lane when it is taken, before it runs. A process killed
 *   mid-job stops renewing its lease; the sweep (any process, every leaseMs/2) frees the lane so
 *   the sandbox's next jobs run, and the lost job is reported, not repeated.
 */
export class LaneDispatcher {
  private readonly blocking: Redis;
  private readonly holderPrefix = `w${randomBytes(6).toString('hex')}`;
  private readonly held = new Map<string, string>();
  private readonly prefix: string;
  private readonly keys: ReturnType<typeof laneKeys>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private timers: NodeJS.Timeout[] = [];
  private loop: Promise<void> | undefined;
  private slotFreed: (() => void) | undefined;
  private idle: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: LaneDispatcherOptions) {
    this.prefix = options.prefix ?? 'cubicle';
    this.keys = laneKeys(this.prefix);
    this.concurrency = options.concurrency ?? 64;
    this.leaseMs = options.leaseMs ?? 10_000;
    // Its own connection: a blocked BZPOPMIN would hold up every other command on a shared one.
    this.blocking = options.connection.duplicate();
  }

  start(): void {
    const renew = setInterval(() => void this.renew(), Math.max(100, this.leaseMs / 3));
    const sweep = setInterval(() => void this.sweep(), Math.max(100, this.leaseMs / 2));
    renew.unref();
    sweep.unref();
    this.timers = [renew, sweep];
    this.loop ??= this.run();
  }

  /** Lanes this process holds right now (jobs running here). */
  get running(): number {
    return this.held.size;
  }

  stats(): { running: number } {
    return { running: this.held.size };
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      try {
        const free = this.concurrency - this.held.size;
        if (free <= 0) {
          await new Promise<void>((resolve) => (this.slotFreed = resolve));
          continue;
        }
        const { ready, active, leases, marker } = this.keys;
        const flat = (await runLaneScript(
          this.options.connection,
          'TAKE',
          [ready, active, leases, marker],
          [this.prefix, this.holderPrefix, this.leaseMs, free],
        )) as string[];
        if (flat.length === 0) {
          // Woken by a push (or after a second, for lanes freed by a sweep elsewhere).
          await this.blocking.bzpopmin(marker, 1);
          continue;
        }
        for (let i = 0; i < flat.length; i += 3) {
          const lane = flat[i]!;
          const holder = flat[i + 1]!;
          this.held.set(lane, holder);
          void this.execute({ ...(JSON.parse(flat[i + 2]!) as LaneJob), lane }, holder);
        }
        // Fewer lanes than asked for: none was left ready when the script ran, so the next one
        // sets the marker (push, finish, sweep). Wait for it rather than ask again at once: an
        // empty TAKE per job is a round trip and a wakeup of Redis on every call's critical path.
        if (flat.length / 3 < free) await this.blocking.bzpopmin(marker, 1);
      } catch (err) {
        if (this.closed) break;
        this.options.onError?.(err);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** execute runs a job (its attempts in place, so later jobs of the lane still wait) and frees the lane. */
  private async execute(job: TakenJob, holder: string): Promise<void> {
    let reply: LaneReply | undefined;
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          reply = laneReplyOf(await this.options.handler(job));
          break;
        } catch (err) {
          const isFinal =
            attempt >= job.attempts || (err as Error)?.name === 'UnrecoverableError' || this.closed;
          if (isFinal) {
            this.options.onFailed?.(job, err);
            break;
          }
          await new Promise((r) => setTimeout(r, job.backoffMs * 2 ** (attempt - 1)));
        }
      }
    } finally {
      const { ready, active, leases, marker } = this.keys;
      await runLaneScript(
        this.options.connection,
        'FINISH',
        [ready, active, leases, marker],
        [this.prefix, job.lane, holder, ...(reply ? [reply.channel, reply.message] : [])],
      ).catch((err: unknown) => this.options.onError?.(err));
      this.held.delete(job.lane);
      this.slotFreed?.();
      this.slotFreed = undefined;
      if (this.held.size === 0) this.idleResolve?.();
    }
  }

  private idleResolve: (() => void) | undefined;

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const pairs = [...this.held].flat();
    await runLaneScript(
      this.options.connection,
      'RENEW',
      [this.keys.active, this.keys.leases],
      [this.leaseMs, ...pairs],
    ).catch((err: unknown) => this.options.onError?.(err));
  }

  /** sweep frees lanes whose holder died; any process may do it, the script decides once. */
  async sweep(): Promise<void> {
    const { ready, active, leases, marker } = this.keys;
    try {
      const flat = (await runLaneScript(
        this.options.connection,
        'SWEEP',
        [ready, active, leases, marker],
        [this.prefix, 100],
      )) as string[];
      for (let i = 0; i < flat.length; i += 2) {
        const holder = flat[i + 1]!;
        const jobId = holder.split('|').slice(3).join('|');
        this.options.onLost?.({ lane: flat[i]!, jobId, holder });
      }
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  /** close stops taking jobs, waits for the running ones to end, and closes its connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.slotFreed?.();
    // Interrupts a blocked BZPOPMIN at once (the loop then sees `closed`).
    this.blocking.disconnect();
    await this.loop;
    if (this.held.size > 0) {
      this.idle ??= new Promise<void>((resolve) => (this.idleResolve = resolve));
      // Running jobs keep their lease while they end (the renew timer is stopped, so renew here).
      const renew = setInterval(() => void this.renew(), Math.max(100, this.leaseMs / 3));
      await this.idle;
      clearInterval(renew);
    }
  }
}
