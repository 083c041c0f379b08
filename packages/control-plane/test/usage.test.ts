import { CreateClaimRequest, PoolSpec, UsageQuery } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaim,
  getUsage,
  poolInsights,
  releaseClaim,
  rollupUsage,
  type Deps,
} from '../src/index.js';
import { world, type World } from './setup.js';

const DAY = '2026-03-02';
const at = (hhmm: string, day = DAY) => new Date(`${day}T${hhmm}:00.000Z`);

/**
 * A scripted day on a fake clock: claims with known durations, warm desktops with known ready
 * and claim times, a run; the rollup must sum exactly to the seconds the script implies.
 */
describe('usage metering on real Postgres (fake clock)', () => {
  let w: World;
  let clock: Date;
  let deps: Deps;
  let poolId: string;
  let cpuMillis: number;
  let memoryMb: number;
  const sandboxIds: string[] = [];

  beforeAll(async () => {
    w = await world();
    clock = at('00:00');
    deps = { ...w.deps, now: () => clock };
    const { pool } = await applyPool(
      deps,
      w.tenantId,
      'metered',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 10 } }),
    );
    poolId = pool.id;
    const row = await w.db.pool.findUniqueOrThrow({ where: { id: pool.id } });
    cpuMillis = row.cpuMillis;
    memoryMb = row.memoryMb;
    // Three desktops ready at midnight (each claimed later), one destroyed unclaimed at 06:00.
    for (let i = 0; i < 4; i++) sandboxIds.push(newId('sandbox'));
    await w.db.sandbox.createMany({
      data: sandboxIds.map((id, i) => ({
        id,
        tenantId: w.tenantId,
        poolId: pool.id,
        backend: 'local' as const,
        image: 'img',
        generation: row.generation,
        state: i < 3 ? ('warm' as const) : ('deleted' as const),
        readyAt: at('00:00'),
        ...(i < 3 ? {} : { endedAt: at('06:00') }),
      })),
    });
  });
  afterAll(async () => w?.close());

  async function claimBetween(from: Date, to: Date) {
    clock = from;
    const { claim, status } = await createClaim(
      deps,
      w.tenantId,
      'metered',
      CreateClaimRequest.parse({ wait_seconds: 0, ttl_seconds: 86_400 }),
    );
    expect(status).toBe(201);
    clock = to;
    await releaseClaim(deps, w.tenantId, claim.id);
    return claim.id;
  }

  const dayQuery = (groupBy: 'pool' | 'day' | 'hour') =>
    UsageQuery.parse({ from: `${DAY}T00:00:00Z`, to: `${DAY}T23:59:59Z`, group_by: groupBy });

  it('a scripted day sums exactly, hour by hour, and a second rollup changes nothing', async () => {
    await claimBetween(at('09:10'), at('09:40')); // 1800 s in hour 09
    const second = await claimBetween(at('10:50'), at('12:20')); // 600 + 3600 + 1200 s
    await claimBetween(at('23:30'), at('00:15', '2026-03-03')); // 1800 s today, 900 s tomorrow
    // A run of the second claim: 11:00 → 11:05.
    await w.db.run.create({
      data: {
        id: newId('run'),
        tenantId: w.tenantId,
        claimId: second,
        status: 'succeeded',
        argv: ['true'],
        timeoutSeconds: 60,
        exitCode: 0,
        startedAt: at('11:00'),
        finishedAt: at('11:05'),
      },
    });
    // The second claim's desktop was paused 11:30 → 12:10 (1800 s in hour 11, 600 s in hour 12).
    await w.db.claimPause.create({
      data: {
        id: `pse_${newId('run').slice(4)}`,
        tenantId: w.tenantId,
        poolId,
        claimId: second,
        reason: 'idle',
        startedAt: at('11:30'),
        endedAt: at('12:10'),
        expiresBefore: at('12:30'),
      },
    });
    // The second claim's egress: denied lines count (5 in hour 11, 4 in hour 12); allowed do not.
    const line = (verdict: string, minute: string, count: number, name: string) => ({
      id: newId('egress_event'),
      tenantId: w.tenantId,
      claimId: second,
      poolId,
      verdict,
      minute: at(minute),
      firstAt: at(minute),
      lastAt: at(minute),
      count,
      protocol: 'dns',
      name,
      rule: 'default:allowlist',
    });
    await w.db.egressEvent.createMany({
      data: [
        line('denied', '11:02', 3, 'a.example.test'),
        line('denied', '11:03', 2, 'a.example.test'),
        line('allowed', '11:03', 7, 'b.example.test'),
        line('denied', '12:10', 4, 'c.example.test'),
      ],
    });

    clock = at('01:00', '2026-03-03');
    const first = await rollupUsage(deps);
    expect(first.rolledTo).toEqual(clock);

    const day = await getUsage(deps, w.tenantId, dayQuery('day'));
    // Warm: the claimed three waited 9h10m, 10h50m and 23h30m; the fourth stood 6 h.
    const warm = (9 * 60 + 10 + 10 * 60 + 50 + 23 * 60 + 30 + 6 * 60) * 60;
    expect(day.rows).toEqual([
      {
        pool_id: poolId,
        pool: 'metered',
        period_start: `${DAY}T00:00:00.000Z`,
        claims: 3,
        claim_seconds: 1800 + 5400 + 1800,
        warm_seconds: warm,
        warm_cpu_core_seconds: (warm * cpuMillis) / 1000,
        warm_memory_gib_seconds: (warm * memoryMb) / 1024,
        runs: 1,
        run_seconds: 300,
        egress_denials: 9,
        // Part of claim_seconds: active time is claim_seconds - paused_seconds.
        paused_seconds: 2400,
      },
    ]);
    expect(day.totals.claim_seconds).toBe(9000);
    expect(day.totals.paused_seconds).toBe(2400);
    expect(day.totals.egress_denials).toBe(9);
    expect(day.rolled_up_to).toBe(clock.toISOString());

    const hours = await getUsage(deps, w.tenantId, dayQuery('hour'));
    const claimSecondsByHour = Object.fromEntries(
      hours.rows.filter((r) => r.claim_seconds > 0).map((r) => [r.period_start, r.claim_seconds]),
    );
    const denialsByHour = Object.fromEntries(
      hours.rows.filter((r) => r.egress_denials > 0).map((r) => [r.period_start, r.egress_denials]),
    );
    expect(denialsByHour).toEqual({ [`${DAY}T11:00:00.000Z`]: 5, [`${DAY}T12:00:00.000Z`]: 4 });
    const pausedByHour = Object.fromEntries(
      hours.rows.filter((r) => r.paused_seconds > 0).map((r) => [r.period_start, r.paused_seconds]),
    );
    expect(pausedByHour).toEqual({ [`${DAY}T11:00:00.000Z`]: 1800, [`${DAY}T12:00:00.000Z`]: 600 });
    expect(claimSecondsByHour).toEqual({
      [`${DAY}T09:00:00.000Z`]: 1800,
      [`${DAY}T10:00:00.000Z`]: 600,
      [`${DAY}T11:00:00.000Z`]: 3600,
      [`${DAY}T12:00:00.000Z`]: 1200,
      [`${DAY}T23:00:00.000Z`]: 1800,
    });
    const nextDay = await getUsage(
      deps,
      w.tenantId,
      UsageQuery.parse({ from: '2026-03-03T00:00:00Z', to: '2026-03-04T00:00:00Z' }),
    );
    expect(nextDay.totals.claim_seconds).toBe(900);
    expect(nextDay.totals.claims).toBe(0);

    // Idempotent: rolling up again (same clock, and later) never adds to stored totals.
    await rollupUsage(deps);
    clock = at('03:30', '2026-03-03');
    await rollupUsage(deps);
    expect(await getUsage(deps, w.tenantId, dayQuery('day'))).toEqual({
      ...day,
      rolled_up_to: clock.toISOString(),
    });
  });

  it('a late fact (written after its hour was rolled up) lands in its own hour', async () => {
    const before = await getUsage(deps, w.tenantId, dayQuery('hour'));
    const claim = await w.db.claim.findFirstOrThrow({
      where: { poolId, activatedAt: at('09:10') },
    });
    // Recorded now (03:30 next day), but it ran 05:10 → 05:40 on the scripted day.
    await w.db.run.create({
      data: {
        id: newId('run'),
        tenantId: w.tenantId,
        claimId: claim.id,
        status: 'succeeded',
        argv: ['late'],
        timeoutSeconds: 60,
        startedAt: at('05:10'),
        finishedAt: at('05:40'),
      },
    });
    expect(await w.db.usageDirty.count()).toBe(1);
    const result = await rollupUsage(deps);
    expect(result.dirty).toBe(1);
    expect(await w.db.usageDirty.count()).toBe(0);
    const after = await getUsage(deps, w.tenantId, dayQuery('hour'));
    const hour5 = after.rows.find((r) => r.period_start === `${DAY}T05:00:00.000Z`);
    expect(hour5?.run_seconds).toBe(1800);
    expect(after.totals.run_seconds).toBe(before.totals.run_seconds + 1800);
    expect(after.totals.claim_seconds).toBe(before.totals.claim_seconds);
  });

  it('another tenant sees none of it', async () => {
    const other = await getUsage(deps, w.otherTenantId, dayQuery('pool'));
    expect(other.rows).toEqual([]);
    expect(other.totals.claim_seconds).toBe(0);
    await expect(
      poolInsights(deps, w.otherTenantId, 'metered', { window: 'day' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('pool insights: counts over the day, claim waits, release reasons', async () => {
    clock = at('23:59');
    const insights = await poolInsights(deps, w.tenantId, 'metered', { window: 'day' });
    expect(insights.samples).toHaveLength(96);
    const sampleAt = (hhmm: string) =>
      insights.samples.find((s) => s.at === at(hhmm).toISOString());
    // At 09:15: one claimed (09:10), two warm (the fourth ended at 06:00).
    expect(sampleAt('09:15')).toMatchObject({ warm: 2, claimed: 1 });
    expect(sampleAt('05:00')).toMatchObject({ warm: 4, claimed: 0 });
    expect(insights.claims).toBe(3);
    expect(insights.waited_claims).toBe(0);
    expect(insights.wait_p50_ms).toBe(0);
    expect(insights.releases).toEqual([{ reason: 'released_by_client', count: 2 }]);
  });

  it('warm core- and GiB-seconds use the size each desktop was provisioned with, not the pool of today', async () => {
    const day = '2026-03-09';
    const spec = (cpu: number, memoryMb: number) =>
      PoolSpec.parse({
        image: 'img',
        cpu,
        memory_mb: memoryMb,
        autoscaling: { min: 0, initial: 0, max: 10 },
      });
    clock = at('00:00', day);
    const { pool } = await applyPool(deps, w.tenantId, 'resized', spec(1, 2048));
    const warmFor = async (from: string, to: string) => {
      const id = newId('sandbox');
      await w.db.sandbox.create({
        data: {
          id,
          tenantId: w.tenantId,
          poolId: pool.id,
          backend: 'local',
          image: 'img',
          generation: 1,
          state: 'deleted',
          readyAt: at(from, day),
          endedAt: at(to, day),
        },
      });
      return id;
    };
    const small = await warmFor('01:00', '02:00'); // 1 core, 2 GiB for an hour
    await applyPool(deps, w.tenantId, 'resized', spec(4, 8192));
    await warmFor('03:00', '03:30'); // 4 cores, 8 GiB for half an hour
    expect(await w.db.sandbox.findUniqueOrThrow({ where: { id: small } })).toMatchObject({
      cpuMillis: 1000,
      memoryMb: 2048,
    });

    clock = at('05:00', day);
    await rollupUsage(deps);
    const usage = await getUsage(
      deps,
      w.tenantId,
      UsageQuery.parse({ from: `${day}T00:00:00Z`, to: `${day}T23:59:59Z`, group_by: 'pool' }),
    );
    const row = usage.rows.find((r) => r.pool === 'resized');
    expect(row).toMatchObject({
      warm_seconds: 3600 + 1800,
      warm_cpu_core_seconds: 3600 * 1 + 1800 * 4,
      warm_memory_gib_seconds: 3600 * 2 + 1800 * 8,
    });
  });
});
