import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPool, createClaim, getClaim, poolInsights } from '../src/index.js';
import { insertActionRecordRow } from '../src/repositories/action-records.js';
import { seedWarm, world, type World } from './setup.js';

/**
 * Time to first confirmed action on real Postgres: the statement that keeps a guest action stamps
 * its claim's first `confirmed` one, once; the claim's answer and its pool's insights read it,
 * each tenant only its own.
 */
describe('time to first confirmed action', () => {
  let w: World;

  /** A pool of the tenant's with `warm` desktops seeded, and a claim on one of them. */
  async function claimOn(tenantId: string, poolName: string) {
    const { pool } = await applyPool(
      w.deps,
      tenantId,
      poolName,
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 50 } }),
    );
    const [sandboxId] = await seedWarm(w.db, tenantId, pool.id, 1);
    const { claim } = await createClaim(
      w.deps,
      tenantId,
      poolName,
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    expect(claim.sandbox?.id).toBe(sandboxId);
    return { claimId: claim.id, sandboxId: sandboxId! };
  }

  /** act keeps one action of the claim with `effect`, as run-guest-call does after a call. */
  const act = (tenantId: string, c: { claimId: string; sandboxId: string }, effect: string) =>
    insertActionRecordRow(w.db, {
      id: newId('action_record'),
      tenantId,
      claimId: c.claimId,
      sandboxId: c.sandboxId,
      operation: 'act.element',
      requestJson: '{}',
      resultJson: JSON.stringify({ effect }),
      effect,
      durationMs: 3,
    });

  const ttfca = async (tenantId: string, claimId: string) =>
    (await getClaim(w.deps, tenantId, claimId)).time_to_first_confirmed_action_ms;

  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('is null until a confirmed action; other effects do not count', async () => {
    const c = await claimOn(w.tenantId, 'effects');
    expect(await ttfca(w.tenantId, c.claimId)).toBeNull();
    for (const effect of ['partial', 'unverifiable', 'suspected_noop', 'refused'])
      expect(await act(w.tenantId, c, effect)).toBeNull();
    expect(await ttfca(w.tenantId, c.claimId)).toBeNull();
    const row = await w.db.claim.findUniqueOrThrow({ where: { id: c.claimId } });
    expect(row.firstConfirmedActionAt).toBeNull();
  });

  it('the first confirmed action sets it; a later one does not overwrite it', async () => {
    const c = await claimOn(w.tenantId, 'first-wins');
    await act(w.tenantId, c, 'refused');
    await new Promise((r) => setTimeout(r, 20));
    const first = await act(w.tenantId, c, 'confirmed');
    expect(first).not.toBeNull();
    expect(first!).toBeGreaterThanOrEqual(20);
    const shown = await ttfca(w.tenantId, c.claimId);
    // The view computes from the stored times (ms precision), the statement from the same ones.
    expect(shown).toBeCloseTo(first!, 0);
    const stamped = (await w.db.claim.findUniqueOrThrow({ where: { id: c.claimId } }))
      .firstConfirmedActionAt;

    await new Promise((r) => setTimeout(r, 30));
    expect(await act(w.tenantId, c, 'confirmed')).toBeNull();
    expect(await ttfca(w.tenantId, c.claimId)).toBe(shown);
    const after = await w.db.claim.findUniqueOrThrow({ where: { id: c.claimId } });
    expect(after.firstConfirmedActionAt).toEqual(stamped);
    expect(await w.db.actionRecord.count({ where: { claimId: c.claimId } })).toBe(3);
  });

  it('of confirmed actions racing on one claim exactly one is first', async () => {
    const c = await claimOn(w.tenantId, 'racing');
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => act(w.tenantId, c, 'confirmed')),
    );
    expect(answers.filter((a) => a !== null)).toHaveLength(1);
    expect(await ttfca(w.tenantId, c.claimId)).not.toBeNull();
  });

  it("pool insights show p50/p99 per pool and per bucket, and only the tenant's own claims", async () => {
    const mine = await claimOn(w.tenantId, 'insights');
    const mineMs = await act(w.tenantId, mine, 'confirmed');
    // Activated, never acted: counted in claims, not in first_actions.
    await claimOn(w.tenantId, 'insights');
    // Another tenant's pool of the same name, whose claim took longer to its first action.
    const theirs = await claimOn(w.otherTenantId, 'insights');
    await new Promise((r) => setTimeout(r, 150));
    const theirMs = await act(w.otherTenantId, theirs, 'confirmed');
    expect(theirMs!).toBeGreaterThanOrEqual(150);
    expect(Math.abs(theirMs! - mineMs!)).toBeGreaterThan(1);

    const insights = await poolInsights(w.deps, w.tenantId, 'insights', { window: 'hour' });
    expect(insights.claims).toBe(2);
    expect(insights.first_actions).toBe(1);
    expect(insights.first_action_p50_ms).toBeCloseTo(mineMs!, 0);
    expect(insights.first_action_p99_ms).toBeCloseTo(mineMs!, 0);
    expect(insights.latency).toHaveLength(insights.samples.length);
    expect(insights.latency.map((b) => b.at)).toEqual(insights.samples.map((s) => s.at));
    const busy = insights.latency.filter((b) => b.claims > 0);
    expect(busy.reduce((n, b) => n + b.claims, 0)).toBe(2);
    expect(busy.reduce((n, b) => n + b.first_actions, 0)).toBe(1);
    const acted = busy.find((b) => b.first_actions === 1)!;
    expect(acted.first_action_p50_ms).toBeCloseTo(mineMs!, 0);
    expect(acted.wait_p50_ms).toBe(0);
    expect(
      insights.latency.filter((b) => b.claims === 0).every((b) => b.first_action_p50_ms === null),
    ).toBe(true);

    const other = await poolInsights(w.deps, w.otherTenantId, 'insights', { window: 'hour' });
    expect(other.claims).toBe(1);
    expect(other.first_actions).toBe(1);
    expect(other.first_action_p50_ms).toBeCloseTo(theirMs!, 0);
  });
});
