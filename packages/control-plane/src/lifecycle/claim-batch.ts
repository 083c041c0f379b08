import { sqlOf, type Sql } from '@cubicle/db';
import { defineDevice, type Resources } from '../resources.js';
import type { Envelope } from '../crypto/envelope.js';
import { ClaimBatchRow, claimOutcomeOf, type ClaimOutcome } from './claim-outcome.js';
import { claimBatch } from './state-statements.js';

/** A secret the claim request carries, sealed before the call, with its row id. */
export interface SealedClaimSecret {
  id: string;
  name: string;
  envelope: Envelope;
}

export interface ClaimRequestItem {
  claimId: string;
  tenantId: string;
  /** The pool by name; the function reads it (live, current generation) itself. */
  poolName: string;
  name: string;
  /** The client chose the name: a live claim of that name is a reconnect. */
  named: boolean;
  metadata: Record<string, string>;
  /** The requested TTL; null takes the pool's. Capped at the pool's maximum lifetime. */
  ttlSeconds: number | null;
  now: Date;
  /** With a key, the key row is written with the claim, and a used key decides the answer. */
  idempotency?: { rowId: string; key: string; scope: string; requestHash: string; expiresAt: Date };
  /** Written with the claim in the same statement (also onto a replayed or reconnected claim). */
  secrets?: SealedClaimSecret[];
}

interface Waiting {
  input: ClaimRequestItem;
  resolve: (outcome: ClaimOutcome) => void;
  reject: (err: unknown) => void;
}

// Batches in flight at once, each on its own connection (so Postgres runs them on several
// cores), and the smallest batch worth a connection of its own when a flush is split.
const MAX_IN_FLIGHT = 4;
const SPLIT_MIN = 8;
// Each item runs in a subtransaction of the batch's transaction; a backend caches 64
// subtransaction ids, past which every snapshot in the cluster has to read pg_subtrans.
const MAX_BATCH = 64;

/** The claim batcher of one control plane, on its database's pool. */
const claimBatcher = defineDevice('claim batcher', (resources) =>
  createBatcher(sqlOf(resources.db)),
);

/**
 * decideClaim runs the claim hot path: cubicle_claim_batch (packages/db/sql/functions) decides
 * each request (a used key, a live name, the pool, the quota under the tenant's row lock, the
 * oldest warm sandbox) and returns its outcome as a value. Claims are group-committed: those
 * arriving in one turn of the event loop, or while the connections are busy, go together (split
 * over up to four connections, so answers of the first batch are sent while the next is decided);
 * a batch is one statement, one round trip and one commit on the plain
 * node-postgres pool (the ORM's per-query CPU would be most of a claim's cost). An item the
 * database refuses (a document Postgres cannot store) comes back `refused` and changes nothing;
 * the others in its batch are unaffected, whoever sent them.
 */
export function decideClaim(
  deps: Pick<Resources, 'devices'>,
  input: ClaimRequestItem,
): Promise<ClaimOutcome> {
  return deps.devices.of(claimBatcher)(input);
}

function createBatcher(sql: Sql) {
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
    // By tenant: every batch takes tenant row locks in one order (no deadlock between batches).
    // A burst of one tenant is split too, although its batches take the tenant's row lock in
    // turn: each batch's answers are rendered and sent while the next one runs in Postgres, so
    // the API's CPU and the database's overlap instead of the whole burst waiting for the last
    // item; each extra batch costs a round trip and a commit.
    queue.sort((x, y) =>
      x.input.tenantId < y.input.tenantId ? -1 : x.input.tenantId > y.input.tenantId ? 1 : 0,
    );
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
    let rows: unknown[];
    try {
      rows = await sql.rows(
        claimBatch,
        batch.map((w) => JSON.stringify(itemOf(w.input))).join('\n'),
      );
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
      try {
        if (rows[i] === undefined)
          throw new Error('the claim batch returned fewer rows than it was sent');
        w.resolve(claimOutcomeOf(ClaimBatchRow.parse(rows[i])));
      } catch (err) {
        w.reject(err);
      }
    }
  }

  return (input: ClaimRequestItem) =>
    new Promise<ClaimOutcome>((resolve, reject) => {
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

const base64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');

function itemOf(i: ClaimRequestItem) {
  const idem = i.idempotency;
  return {
    // Absent rather than empty: the function skips the secrets step for an item without it.
    ...(i.secrets && i.secrets.length > 0
      ? {
          secrets: i.secrets.map((x) => ({
            id: x.id,
            name: x.name,
            ciphertext: base64(x.envelope.ciphertext),
            nonce: base64(x.envelope.nonce),
            wrapped_key: base64(x.envelope.wrappedKey),
            key_id: x.envelope.keyId,
          })),
        }
      : {}),
    now: i.now.toISOString(),
    tenant_id: i.tenantId,
    pool_name: i.poolName,
    claim_id: i.claimId,
    name: i.name,
    named: i.named,
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
