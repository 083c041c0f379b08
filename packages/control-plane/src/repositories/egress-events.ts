import type { ClaimEgress } from '@cubicle/contract/api';
import { sqlOf, statement, type Db } from '@cubicle/db';

// The egress tables' raw statements: a sandbox's policy inputs (its pool's policy and the
// narrowing of the claim holding it), the collapsing write of the egress point's reports, and the
// Network tab's destination counts. The event page itself is a plain ORM read.

/** What a sandbox's effective policy is computed from. */
export interface SandboxEgressRow {
  id: string;
  tenant_id: string;
  pool_id: string;
  backend_ref: string | null;
  state: string;
  pool_egress: unknown;
  claim_id: string | null;
  claim_egress: unknown;
}

/**
 * A sandbox with its pool's policy and the claim holding it: the newest unreleased claim on it
 * (an active claim past its TTL that the sweep has not released yet still holds it, and its
 * narrowing still applies — narrower is the safe side).
 */
export const selectSandboxEgress = statement<SandboxEgressRow, [sandboxId: string]>(
  'cubicle_egress_sandbox_v1',
  `SELECT s.id, s.tenant_id, s.pool_id, s.backend_ref, s.state::text AS state,
          p.egress AS pool_egress, c.id AS claim_id, c.egress AS claim_egress
     FROM sandboxes s
     JOIN pools p ON p.id = s.pool_id
     LEFT JOIN LATERAL (
       SELECT id, egress FROM claims
        WHERE sandbox_id = s.id AND released_at IS NULL
        ORDER BY created_at DESC LIMIT 1
     ) c ON true
    WHERE s.id = $1`,
);

export async function readSandboxEgress(db: Db, sandboxId: string) {
  return sqlOf(db).row(selectSandboxEgress, sandboxId);
}

/** The claims holding sandboxes (same rule as selectSandboxEgress), for attributing reports. */
export const selectSandboxHolders = statement<
  { sandbox_id: string; claim_id: string; tenant_id: string; pool_id: string },
  [sandboxIds: string[]]
>(
  'cubicle_egress_sandbox_holders_v1',
  `SELECT DISTINCT ON (sandbox_id) sandbox_id, id AS claim_id, tenant_id, pool_id
     FROM claims
    WHERE sandbox_id = ANY($1::text[]) AND released_at IS NULL
    ORDER BY sandbox_id, created_at DESC`,
);

/** One collapsed line to add (its key is unique within one call). */
export interface EgressEventInput {
  id: string;
  tenantId: string;
  claimId: string;
  poolId: string;
  sandboxId: string;
  verdict: 'allowed' | 'denied';
  minute: Date;
  firstAt: Date;
  lastAt: Date;
  count: number;
  protocol: string;
  name: string;
  ip: string;
  port: number;
  rule: string;
  process: string | null;
}

type Columns = [
  string[],
  string[],
  string[],
  string[],
  string[],
  string[],
  string[],
  string[],
  string[],
  number[],
  string[],
  string[],
  string[],
  number[],
  string[],
  (string | null)[],
];

/**
 * Adds lines to their (claim, minute, destination, rule) rows: a new row, or the count added to
 * the existing one. `inserted` says which, so the first denial of a minute raises the webhook and
 * audit once while later ones only count.
 */
const upsertEgressEvents = statement<EgressEventWritten, Columns>(
  'cubicle_egress_events_upsert_v1',
  `INSERT INTO egress_events AS e
     (id, tenant_id, claim_id, pool_id, sandbox_id, verdict, minute, first_at, last_at, count,
      protocol, name, ip, port, rule, process)
   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                        $7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::int[],
                        $11::text[], $12::text[], $13::text[], $14::int[], $15::text[], $16::text[])
   ON CONFLICT (claim_id, minute, verdict, protocol, name, ip, port, rule) DO UPDATE
     SET count = e.count + EXCLUDED.count,
         first_at = LEAST(e.first_at, EXCLUDED.first_at),
         last_at = GREATEST(e.last_at, EXCLUDED.last_at),
         process = COALESCE(e.process, EXCLUDED.process)
   RETURNING e.id, (xmax = 0) AS inserted, e.count, e.first_at, e.last_at, e.claim_id,
             e.minute, e.verdict, e.protocol, e.name, e.ip, e.port, e.rule`,
);

/** A line as stored after the write (its row's id and totals), with its collapse key. */
export interface EgressEventWritten {
  id: string;
  inserted: boolean;
  count: number;
  first_at: Date;
  last_at: Date;
  claim_id: string;
  minute: Date;
  verdict: string;
  protocol: string;
  name: string;
  ip: string;
  port: number;
  rule: string;
}

/** collapseKey is a line's unique key as text (the same for an input and its stored row). */
export const collapseKey = (l: {
  claimId?: string;
  claim_id?: string;
  minute: Date;
  verdict: string;
  protocol: string;
  name: string;
  ip: string;
  port: number;
  rule: string;
}) =>
  [
    l.claimId ?? l.claim_id,
    new Date(l.minute).getTime(),
    l.verdict,
    l.protocol,
    l.name,
    l.ip,
    l.port,
    l.rule,
  ].join('\u0000');

/**
 * addEgressEvents writes lines (keys unique within the call) in one statement and answers the
 * stored rows; match them to inputs with collapseKey (a line that joined an existing row comes
 * back with that row's id).
 */
export async function addEgressEvents(
  db: Db,
  lines: EgressEventInput[],
): Promise<EgressEventWritten[]> {
  if (lines.length === 0) return [];
  const col = <K extends keyof EgressEventInput>(k: K) => lines.map((l) => l[k]);
  const iso = (k: 'minute' | 'firstAt' | 'lastAt') => lines.map((l) => l[k].toISOString());
  const rows = await sqlOf(db).rows(
    upsertEgressEvents,
    col('id'),
    col('tenantId'),
    col('claimId'),
    col('poolId'),
    col('sandboxId'),
    col('verdict'),
    iso('minute'),
    iso('firstAt'),
    iso('lastAt'),
    col('count'),
    col('protocol'),
    col('name'),
    col('ip'),
    col('port'),
    col('rule'),
    col('process'),
  );
  return rows;
}

/** A claim's destinations: all its lines summed per verdict, destination and rule. */
const selectClaimDestinations = statement<
  {
    verdict: 'allowed' | 'denied';
    name: string;
    ip: string;
    port: number;
    rule: string;
    count: number;
    last_at: Date;
  },
  [claimId: string]
>(
  'cubicle_egress_claim_destinations_v1',
  `SELECT verdict, name, ip, port, rule, sum(count)::int AS count, max(last_at) AS last_at
     FROM egress_events WHERE claim_id = $1
    GROUP BY verdict, name, ip, port, rule
    ORDER BY count DESC, last_at DESC LIMIT 200`,
);

export async function claimDestinations(
  db: Db,
  claimId: string,
): Promise<ClaimEgress['destinations']> {
  const rows = await sqlOf(db).rows(selectClaimDestinations, claimId);
  return rows.map((r) => ({
    verdict: r.verdict,
    name: r.name === '' ? null : r.name,
    ip: r.ip === '' ? null : r.ip,
    port: r.port < 0 ? null : r.port,
    rule: r.rule,
    count: r.count,
    last_at: new Date(r.last_at).toISOString(),
  }));
}
