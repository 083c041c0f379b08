import { sqlPoolOf, type Db } from '@cubicle/db';

export interface InsertClaimInput {
  claimId: string;
  tenantId: string;
  /** The pool by name; the statement reads it (live, current generation) itself. */
  poolName: string;
  name: string;
  metadata: Record<string, string>;
  /** The requested TTL; null takes the pool's. Capped at the pool's maximum lifetime. */
  ttlSeconds: number | null;
  now: Date;
  /** With a key, the key row is written with the claim (a duplicate key rolls the claim back). */
  idempotency?: { rowId: string; key: string; scope: string; requestHash: string; expiresAt: Date };
}

/** The claim and (when one was free) the sandbox rows as the statement wrote them (snake_case). */
export interface InsertedClaim {
  /** False when the tenant has no live pool of that name (nothing was written). */
  poolFound: boolean;
  poolId: string | null;
  quotaOk: boolean;
  limit: number;
  used: number;
  claim: Record<string, unknown> | null;
  sandbox: Record<string, unknown> | null;
}

/** A claim the database refused (the item alone was rolled back): SQLSTATE and constraint, as pg reports them. */
export class ClaimStatementError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly constraint: string | undefined,
  ) {
    super(message);
    this.name = 'ClaimStatementError';
  }
}

interface BatchRow {
  idx: number;
  pool_id: string | null;
  quota_ok: boolean;
  lim: number;
  used: number;
  claim: Record<string, unknown> | null;
  sandbox: Record<string, unknown> | null;
  err_code: string | null;
  err_constraint: string | null;
  err_message: string | null;
}

interface Waiting {
  input: InsertClaimInput;
  resolve: (claim: InsertedClaim) => void;
  reject: (err: unknown) => void;
}

// Batches in flight at once, each on its own connection (so Postgres runs them on several
// cores), and the smallest batch worth a connection of its own when a flush is split.
const MAX_IN_FLIGHT = 4;
const SPLIT_MIN = 8;
const MAX_BATCH = 200;

const batchers = new WeakMap<Db, (input: InsertClaimInput) => Promise<InsertedClaim>>();

/**
 * insertClaim runs the claim hot path (see migration `claim_batch`): find the tenant's live
 * pool by name, check the concurrent-claims quota, take the oldest warm sandbox of the pool's
 * current generation (SKIP LOCKED), insert the claim (active with it, or pending without) and
 * the idempotency key. Claims are group-committed: those arriving in one turn of the event loop,
 * or while the connections are busy, go together (split over up to four connections); a batch
 * is one statement, one round trip and one commit on the plain node-postgres pool (the ORM's
 * per-query CPU would be most of a claim's cost). A claim the database refuses (a unique
 * violation: live name taken, key already used; a document Postgres cannot store) rejects with a
 * ClaimStatementError and changes nothing; the others in its batch are unaffected, whoever sent
 * them. The quota count is not locked, so claims at
 * the quota's edge in concurrent batches (or API processes) may pass together.
 */
export function insertClaim(db: Db, input: InsertClaimInput): Promise<InsertedClaim> {
  let submit = batchers.get(db);
  if (!submit) batchers.set(db, (submit = createBatcher(sqlPoolOf(db))));
  return submit(input);
}

function createBatcher(pool: ReturnType<typeof sqlPoolOf>) {
  let queue: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;

  // Claims that arrive in one turn of the event loop (a burst read from many sockets at once)
  // go together: the first schedules the flush for the end of the turn, the rest join it.
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  }

  function flush() {
    const free = MAX_IN_FLIGHT - inFlight;
    if (free <= 0 || queue.length === 0) return; // a finishing batch flushes again
    const parts = Math.min(free, Math.ceil(queue.length / SPLIT_MIN));
    const size = Math.min(MAX_BATCH, Math.ceil(queue.length / parts));
    for (let i = 0; i < parts && queue.length > 0; i++) {
      const batch = queue.slice(0, size);
      queue = queue.slice(batch.length);
      inFlight++;
      void run(batch).finally(() => {
        inFlight--;
        flush();
      });
    }
  }

  async function run(batch: Waiting[]): Promise<void> {
    let rows: BatchRow[];
    try {
      ({ rows } = await pool.query<BatchRow>({
        // Named: each connection plans it once, then only binds and runs it.
        name: 'cubicle_claim_batch_v2',
        text: 'SELECT * FROM cubicle_claim_batch($1::text[]) ORDER BY idx',
        // One JSON text per item: the function parses each in the item's own subtransaction.
        values: [batch.map((w) => JSON.stringify(itemOf(w.input)))],
      }));
    } catch (err) {
      // The function isolates items; should the statement itself still fail on some input, no
      // item may fail for another's: halve the batch until the failure is down to its item.
      if (batch.length > 1 && isSplittable(err)) {
        const half = Math.ceil(batch.length / 2);
        await run(batch.slice(0, half));
        await run(batch.slice(half));
        return;
      }
      for (const w of batch) w.reject(err);
      return;
    }
    for (const [i, w] of batch.entries()) {
      const row = rows[i];
      if (!row) w.reject(new Error('the claim batch returned fewer rows than it was sent'));
      else if (row.err_code)
        w.reject(
          new ClaimStatementError(
            row.err_message ?? 'claim refused',
            row.err_code,
            row.err_constraint ?? undefined,
          ),
        );
      else
        w.resolve({
          poolFound: row.pool_id !== null,
          poolId: row.pool_id,
          quotaOk: row.quota_ok,
          limit: row.lim,
          used: row.used,
          claim: row.claim,
          sandbox: row.sandbox,
        });
    }
  }

  return (input: InsertClaimInput) =>
    new Promise<InsertedClaim>((resolve, reject) => {
      queue.push({ input, resolve, reject });
      schedule();
    });
}

/**
 * isSplittable tells a statement failure that some item's input may have caused (Postgres
 * answered with a SQLSTATE) from one that would fail any batch alike: no connection (class 08 or
 * no SQLSTATE at all), no resources (53), the server shutting down or cancelling (57). Splitting
 * on the latter would only multiply statements against a database that cannot take them.
 */
export function isSplittable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
  return !['08', '53', '57'].includes(code.slice(0, 2));
}

function itemOf(i: InsertClaimInput) {
  const idem = i.idempotency;
  return {
    now: i.now.toISOString(),
    tenant_id: i.tenantId,
    pool_name: i.poolName,
    claim_id: i.claimId,
    name: i.name,
    metadata: i.metadata,
    ttl_seconds: i.ttlSeconds,
    idempotency: idem
      ? {
          id: idem.rowId,
          key: idem.key,
          scope: idem.scope,
          request_hash: idem.requestHash,
          expires_at: idem.expiresAt.toISOString(),
        }
      : null,
  };
}
