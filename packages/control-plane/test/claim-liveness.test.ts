import { sqlPoolOf } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_STATUSES } from '../src/lifecycle/states.js';
import { isClaimLive } from '../src/lifecycle/claim-liveness.js';
import { world, type World } from './setup.js';

/**
 * isClaimLive and its SQL twin cubicle_claim_is_live (packages/db/sql/functions) are one rule
 * written twice: this holds them equal on real Postgres, for every status and a deadline before,
 * at and after `now` (the deadline itself is no longer live), and checks that the planner inlines
 * the function, so a statement filtering on it keeps its index paths.
 */
describe('the claim liveness rule', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('TypeScript and SQL agree for every status and deadline', async () => {
    const now = new Date('2026-12-08T09:00:00.000Z');
    const cases = CLAIM_STATUSES.flatMap((status) =>
      [-1, 0, 1, -86_400_000, 86_400_000].map((offset) => ({
        status,
        expiresAt: new Date(now.getTime() + offset),
      })),
    );
    const { rows } = await sqlPoolOf(w.db).query<{ live: boolean }>(
      `SELECT cubicle_claim_is_live(c.status::claim_status, c.expires_at::timestamptz, $3) AS live
       FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS c(status, expires_at, n)
       ORDER BY n`,
      [cases.map((c) => c.status), cases.map((c) => c.expiresAt), now],
    );
    expect(rows.map((r) => r.live)).toEqual(cases.map((c) => isClaimLive(c, now)));
    expect(rows.filter((r) => r.live)).toHaveLength(2); // active, 1 ms and a day ahead
  });

  it('is inlined by the planner: a statement filters on the columns themselves', async () => {
    const { rows } = await sqlPoolOf(w.db).query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (VERBOSE, COSTS OFF)
       SELECT id FROM claims c WHERE c.id = 'x' AND cubicle_claim_is_live(c.status, c.expires_at, now())`,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).not.toContain('cubicle_claim_is_live');
    expect(plan).toMatch(/status = 'active'::claim_status/);
    expect(plan).toMatch(/expires_at > now\(\)/);
  });
});
