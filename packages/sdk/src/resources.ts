import { ClaimHandle, type Claim } from './claim-handle.js';
import { CubicleError } from './errors.js';
import type { BodyOf, ItemOf, QueryOf, ResponseOf } from './operations.js';
import { backoffMs, DEFAULT_RETRY, sleep } from './retry.js';
import { parseSse } from './sse.js';
import type { CallOptions, Transport } from './transport.js';

export type Pool = ResponseOf<'getPool'>;
export type Run = ResponseOf<'getRun'>;
export type RunEvent = ResponseOf<'listRunEvents'>['data'][number];

/** Pools: named warm pools, applied declaratively. */
export class Pools {
  constructor(readonly t: Transport) {}

  /** apply creates or updates a pool (PUT: idempotent, so retried like a read). */
  apply(name: string, spec: BodyOf<'applyPool'>, options?: CallOptions): Promise<Pool> {
    return this.t.call('applyPool', { params: { name }, body: spec }, options);
  }
  get(name: string, options?: CallOptions): Promise<Pool> {
    return this.t.call('getPool', { params: { name } }, options);
  }
  /** list pages through every pool (an async iterator; `for await`). */
  list(query?: QueryOf<'listPools'>, options?: CallOptions): AsyncGenerator<ItemOf<'listPools'>> {
    return this.t.paginate('listPools', { query }, options);
  }
  /** delete drains the pool: live claims run to their end, warm sandboxes are destroyed. */
  delete(name: string, options?: CallOptions): Promise<Pool> {
    return this.t.call('deletePool', { params: { name } }, options);
  }
}

/** Claims: take a sandbox from a pool, keep it alive, give it back. */
export class Claims {
  constructor(readonly t: Transport) {}

  /**
   * create claims a sandbox from `pool`. The answer may be pending (no desktop within
   * `wait_seconds`): call `waitUntilActive()` on the handle. Retried with one Idempotency-Key,
   * so a retry after a lost answer returns the same claim, never a second one.
   */
  async create(
    pool: string,
    body: BodyOf<'createClaim'> = {},
    options?: CallOptions,
  ): Promise<ClaimHandle> {
    const answer = await this.t.call('createClaim', { params: { name: pool }, body }, options);
    // `count` answers a ClaimBatch: that is fork()'s shape, not one handle.
    if ('claims' in answer)
      throw new TypeError('claims.create makes one claim; use claims.fork for count');
    return new ClaimHandle(this.t, answer);
  }
  /**
   * fork claims `count` desktops (1–20) from `pool`, each restored from the snapshot before it
   * answers and independent of the others; all or none, and one Idempotency-Key for the batch.
   */
  async fork(
    pool: string,
    fromSnapshot: string,
    count = 1,
    body: Omit<BodyOf<'createClaim'>, 'from_snapshot' | 'count'> = {},
    options?: CallOptions,
  ): Promise<ClaimHandle[]> {
    const answer = await this.t.call(
      'createClaim',
      { params: { name: pool }, body: { ...body, from_snapshot: fromSnapshot, count } },
      options,
    );
    const claims = 'claims' in answer ? answer.claims : [answer];
    return claims.map((claim) => new ClaimHandle(this.t, claim));
  }
  async get(id: string, options?: CallOptions): Promise<ClaimHandle> {
    return new ClaimHandle(this.t, await this.t.call('getClaim', { params: { id } }, options));
  }
  /** handle wraps a claim id without a round trip (its `data` is only the id until refreshed). */
  handle(claim: Claim): ClaimHandle {
    return new ClaimHandle(this.t, claim);
  }
  list(query?: QueryOf<'listClaims'>, options?: CallOptions): AsyncGenerator<Claim> {
    return this.t.paginate('listClaims', { query }, options);
  }
  heartbeat(id: string, options?: CallOptions): Promise<Claim> {
    return this.t.call('heartbeatClaim', { params: { id } }, options);
  }
  extend(id: string, ttlSeconds: number, options?: CallOptions): Promise<Claim> {
    const body = { ttl_seconds: ttlSeconds } as BodyOf<'updateClaim'>;
    return this.t.call('updateClaim', { params: { id }, body }, options);
  }
  release(id: string, options?: CallOptions): Promise<Claim> {
    return this.t.call('releaseClaim', { params: { id } }, options);
  }
}

/** ViewerTickets: signed, short-lived links to watch (or control) a claim's desktop. */
export class ViewerTickets {
  constructor(readonly t: Transport) {}

  create(
    claimId: string,
    body: BodyOf<'createViewerTicket'> = {} as BodyOf<'createViewerTicket'>,
    options?: CallOptions,
  ) {
    return this.t.call('createViewerTicket', { params: { id: claimId }, body }, options);
  }
  list(claimId: string, options?: CallOptions) {
    return this.t.paginate('listViewerTickets', { params: { id: claimId } }, options);
  }
  revoke(ticketId: string, options?: CallOptions) {
    return this.t.call('revokeViewerTicket', { params: { ticket_id: ticketId } }, options);
  }
  /** introspect needs no API key: the ticket is the credential. */
  introspect(ticket: string, options?: CallOptions) {
    return this.t.call('introspectViewerTicket', { body: { ticket } }, options);
  }
}

/** EventsOptions: where to start and how persistent to be about a dropped stream. */
export interface EventsOptions {
  /** Start after this seq (default 0: from the first event). */
  afterSeq?: number;
  signal?: AbortSignal;
  /** Reconnects in a row without a new event before giving up (default 10). */
  maxReconnects?: number;
}

/** Runs: programs started in a claimed sandbox, with a resumable event log. */
export class Runs {
  constructor(readonly t: Transport) {}

  create(claimId: string, body: BodyOf<'createRun'>, options?: CallOptions): Promise<Run> {
    return this.t.call('createRun', { params: { id: claimId }, body }, options);
  }
  get(runId: string, options?: CallOptions): Promise<Run> {
    return this.t.call('getRun', { params: { run_id: runId } }, options);
  }
  list(claimId: string, options?: CallOptions): AsyncGenerator<Run> {
    return this.t.paginate('listClaimRuns', { params: { id: claimId } }, options);
  }
  /** listAll yields the tenant's runs across claims, newest first (`status` keeps one state). */
  listAll(query?: QueryOf<'listRuns'>, options?: CallOptions): AsyncGenerator<Run> {
    return this.t.paginate('listRuns', { query }, options);
  }
  /** eventPage reads one page of a run's events after `after_seq` (JSON, not live). */
  eventPage(runId: string, query?: QueryOf<'listRunEvents'>, options?: CallOptions) {
    return this.t.call('listRunEvents', { params: { run_id: runId }, query }, options);
  }
  stdin(runId: string, body: BodyOf<'writeRunStdin'>, options?: CallOptions) {
    return this.t.call('writeRunStdin', { params: { run_id: runId }, body }, options);
  }
  cancel(runId: string, body: BodyOf<'cancelRun'> = {}, options?: CallOptions) {
    return this.t.call('cancelRun', { params: { run_id: runId }, body }, options);
  }

  /**
   * events yields a run's events in seq order, live, until the run ends. A dropped connection
   * is reopened with `Last-Event-ID` set to the last seq seen, so no event is lost or repeated.
   */
  async *events(runId: string, options: EventsOptions = {}): AsyncGenerator<RunEvent> {
    let lastSeq = options.afterSeq ?? 0;
    let failures = 0;
    const maxReconnects = options.maxReconnects ?? 10;
    for (;;) {
      try {
        const response = await this.t.send(
          'streamRunEvents',
          {
            params: { run_id: runId },
            headers: lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {},
          },
          // A stream lasts as long as the run: no timeout, only the caller's signal.
          { signal: options.signal, timeoutMs: Infinity },
          'text/event-stream',
        );
        for await (const message of parseSse(response.body!)) {
          if (message.event === 'end') return;
          const event = JSON.parse(message.data) as RunEvent;
          if (event.seq <= lastSeq) continue;
          lastSeq = event.seq;
          failures = 0;
          yield event;
        }
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason;
        // An answer from the API (404, 401, …) will not change by reconnecting.
        if (error instanceof CubicleError && error.status !== 0) throw error;
        if (++failures > maxReconnects) throw error;
      }
      // The stream ended without `event: end` or broke: come back after a short, jittered wait.
      await sleep(backoffMs(Math.min(failures, 5), DEFAULT_RETRY), options.signal);
    }
  }
}

/** Secrets: a claim's secrets and the tenant's stored ones; values are write-only. */
export class Secrets {
  constructor(readonly t: Transport) {}

  create(claimId: string, body: BodyOf<'createSecret'>, options?: CallOptions) {
    return this.t.call('createSecret', { params: { id: claimId }, body }, options);
  }
  list(claimId: string, options?: CallOptions) {
    return this.t.paginate('listSecrets', { params: { id: claimId } }, options);
  }
  delete(claimId: string, secretId: string, options?: CallOptions) {
    return this.t.call('deleteSecret', { params: { id: claimId, secret_id: secretId } }, options);
  }
  readonly stored = {
    list: (options?: CallOptions) => this.t.paginate('listStoredSecrets', {}, options),
    create: (body: BodyOf<'createStoredSecret'>, options?: CallOptions) =>
      this.t.call('createStoredSecret', { body }, options),
    put: (name: string, body: BodyOf<'putStoredSecret'>, options?: CallOptions) =>
      this.t.call('putStoredSecret', { params: { name }, body }, options),
    delete: (name: string, options?: CallOptions) =>
      this.t.call('deleteStoredSecret', { params: { name } }, options),
  };
}
