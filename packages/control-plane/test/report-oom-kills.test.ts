import { CreateClaimRequest, PoolSpec, SandboxOomKilledData } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// Imported by module, not through the index: the test needs only these.
import { createClaim } from '../src/claims/create-claim.js';
import { getClaim } from '../src/claims/manage-claims.js';
import { newKeyringSpec, parseKeyring } from '../src/crypto/keyring.js';
import { applyPool } from '../src/pools/apply-pool.js';
import { createWebhook } from '../src/webhooks/manage-webhooks.js';
import { reportOomKills } from '../src/sandboxes/report-oom-kills.js';
import { seedWarm, world, type World } from './setup.js';

const MiB = 1024 * 1024;

/**
 * reportOomKills against real Postgres: a rise of a sandbox's OOM kill count is recorded once —
 * on the sandbox (the claim's view), in the audit log on its claim and in the webhook outbox —
 * however many workers read the same count at once; the same or a lower count records nothing.
 */
describe('reportOomKills', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('records each rise once, on the claim, the audit log and the outbox', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'oom',
      PoolSpec.parse({ image: 'a', memory_mb: 512, autoscaling: { min: 0, initial: 0, max: 2 } }),
    );
    await createWebhook(
      { db: w.db, keyring: parseKeyring(newKeyringSpec()), webhooks: { allowPrivate: false } },
      w.tenantId,
      { url: 'https://93.184.215.14/hook', events: ['sandbox.oom_killed'] },
    );
    const [sandboxId] = await seedWarm(w.db, w.tenantId, pool.id, 1);
    const { claim } = await createClaim(
      w.deps,
      w.tenantId,
      'oom',
      CreateClaimRequest.parse({ wait_seconds: 0 }),
    );
    expect(claim.sandbox?.oom_kills).toBe(0);
    const resources = { oomKills: 2, memoryLimitBytes: 512 * MiB };

    // Three workers read the same count at once: one of them reports it.
    const raced = await Promise.all(
      [1, 2, 3].map(() => reportOomKills(w.deps, sandboxId!, resources)),
    );
    expect(raced.filter(Boolean)).toHaveLength(1);
    expect(await reportOomKills(w.deps, sandboxId!, { ...resources, oomKills: 1 })).toBe(false);
    expect(await reportOomKills(w.deps, sandboxId!, { oomKills: 0, memoryLimitBytes: null })).toBe(
      false,
    );
    expect(await reportOomKills(w.deps, sandboxId!, null)).toBe(false);

    expect((await getClaim(w.deps, w.tenantId, claim.id)).sandbox?.oom_kills).toBe(2);
    const audit = await w.db.auditEvent.findMany({ where: { action: 'sandbox.oom_killed' } });
    expect(audit).toEqual([
      expect.objectContaining({
        tenantId: w.tenantId,
        actorType: 'system',
        targetType: 'claim',
        targetId: claim.id,
        details: {
          sandbox_id: sandboxId,
          oom_kills: 2,
          memory_limit_mb: 512,
          sandbox_failed: false,
          component: 'worker',
        },
      }),
    ]);
    const deliveries = await w.db.webhookDelivery.findMany({
      where: { eventType: 'sandbox.oom_killed' },
    });
    expect(deliveries).toHaveLength(1);
    const body = JSON.parse(deliveries[0]!.body) as { data: unknown };
    expect(SandboxOomKilledData.parse(body.data)).toEqual({
      sandbox_id: sandboxId,
      pool: 'oom',
      pool_id: pool.id,
      claim_id: claim.id,
      oom_kills: 2,
      memory_limit_mb: 512,
      sandbox_failed: false,
    });

    // A later rise is a new report; cgroup v1's "no limit" (~2^63) is no limit.
    expect(
      await reportOomKills(w.deps, sandboxId!, { oomKills: 3, memoryLimitBytes: 2 ** 63 }, true),
    ).toBe(true);
    const last = await w.db.auditEvent.findFirst({
      where: { action: 'sandbox.oom_killed' },
      orderBy: { createdAt: 'desc' },
    });
    expect(last?.details).toMatchObject({
      oom_kills: 3,
      memory_limit_mb: null,
      sandbox_failed: true,
    });
  });
});
