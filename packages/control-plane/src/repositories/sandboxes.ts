// The sandboxes repository: statements on the sandboxes table, and the mapper of a sandbox row
// as plain SQL gives it (`to_jsonb`). State changes are the lifecycle's (state-writes.test.ts);
// what is here reads sandboxes, or writes columns no state depends on.
import {
  sqlOf,
  statement,
  type Db,
  type Prisma,
  type Sandbox,
  type SandboxState,
} from '@cubicle/db';

type Json = Record<string, unknown>;

const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
const dateOrThrow = (v: unknown) => new Date(v as string);

/** sandboxFromJson turns a sandbox's `to_jsonb` into the shape Prisma returns. */
export function sandboxFromJson(j: Json): Sandbox {
  return {
    id: j.id as string,
    tenantId: j.tenant_id as string,
    poolId: j.pool_id as string,
    state: j.state as Sandbox['state'],
    backend: j.backend as Sandbox['backend'],
    image: j.image as string,
    generation: j.generation as number,
    backendRef: (j.backend_ref as string | null) ?? null,
    guestEndpoint: (j.guest_endpoint as string | null) ?? null,
    vncEndpoint: (j.vnc_endpoint as string | null) ?? null,
    // Never rendered; not worth decoding from the JSON hex form.
    guestTokenCiphertext: null,
    failureReason: (j.failure_reason as string | null) ?? null,
    stateReason: (j.state_reason as string | null) ?? null,
    createdAt: dateOrThrow(j.created_at),
    updatedAt: dateOrThrow(j.updated_at),
    readyAt: date(j.ready_at),
    claimedAt: date(j.claimed_at),
    endedAt: date(j.ended_at),
    cpuMillis: (j.cpu_millis as number | null) ?? null,
    memoryMb: (j.memory_mb as number | null) ?? null,
    oomKills: (j.oom_kills as number | undefined) ?? 0,
    primedWindows: (j.primed_windows as Sandbox['primedWindows'] | undefined) ?? [],
    egressLink: (j.egress_link as boolean | null | undefined) ?? null,
  };
}

/** A sandbox the database knows, as the backend sweep compares it with a backend's listing. */
export interface KnownSandboxRow {
  id: string;
  state: SandboxState;
  tenant_id: string;
  pool_id: string;
  ready_at: Date | null;
  oom_kills: number;
}

// One array parameter, not one bind parameter per id: the listing can hold every sandbox of the
// installation (10,000 and more).
const knownSandboxes = statement<KnownSandboxRow, [string[], string, Date]>(
  'cubicle_sweep_known_sandboxes_v1',
  `SELECT id, state::text AS state, tenant_id, pool_id, ready_at, oom_kills FROM sandboxes
   WHERE id = ANY($1::text[])
      OR (backend::text = $2 AND state IN ('warm', 'claimed') AND ready_at < $3)`,
);

/**
 * knownSandboxRows reads the sandboxes among `ids` (what a backend runs), and the backend's warm
 * or claimed ones that were ready before `readyBefore` (which the listing should hold).
 */
export function knownSandboxRows(
  db: Db,
  ids: string[],
  backend: string,
  readyBefore: Date,
): Promise<KnownSandboxRow[]> {
  return sqlOf(db).rows(knownSandboxes, ids, backend, readyBefore);
}

/** The sandbox whose recorded OOM kills rose, with its pool and its one claim (live or ended). */
export interface RaisedOomKillsRow {
  tenant_id: string;
  pool_id: string;
  pool: string;
  claim_id: string | null;
}

const raiseOomKills = statement<RaisedOomKillsRow, [number, string]>(
  'cubicle_raise_oom_kills_v1',
  `UPDATE sandboxes s SET oom_kills = $1, updated_at = now()
   FROM pools p
   WHERE s.id = $2 AND s.oom_kills < $1 AND p.id = s.pool_id
   RETURNING s.tenant_id, s.pool_id, p.name AS pool,
     (SELECT c.id FROM claims c WHERE c.sandbox_id = s.id) AS claim_id`,
);

/**
 * raiseOomKillsRow sets a sandbox's `oom_kills` to `kills` when that is a rise: the guard makes each
 * rise recorded once, however many workers read the same count. Undefined when it was no rise.
 * In the caller's transaction, which records the rise's audit event and webhook with it.
 */
export function raiseOomKillsRow(
  tx: Prisma.TransactionClient,
  sandboxId: string,
  kills: number,
): Promise<RaisedOomKillsRow | undefined> {
  return sqlOf(tx).row(raiseOomKills, kills, sandboxId);
}

/** Sandboxes of one pool in one state (deleted ones left out), as the API's gauge reports them. */
export interface PoolSandboxCountRow {
  tenant_id: string;
  name: string;
  state: string;
  n: number;
}

const poolSandboxCounts = statement<PoolSandboxCountRow, []>(
  'cubicle_pool_sandbox_counts_v1',
  `SELECT p.tenant_id, p.name, s.state::text AS state, count(*)::int AS n
   FROM sandboxes s JOIN pools p ON p.id = s.pool_id
   WHERE s.state <> 'deleted' GROUP BY 1, 2, 3`,
);

/** poolSandboxCountRows counts the sandboxes of every pool by state, in one grouped query. */
export function poolSandboxCountRows(db: Db): Promise<PoolSandboxCountRow[]> {
  return sqlOf(db).rows(poolSandboxCounts);
}
