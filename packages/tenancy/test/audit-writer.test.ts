import { sqlPoolOf, type Db } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditWriter, createTenant } from '../src/index.js';
import { databaseFixture } from './tenancy-fixture.js';

describe('createAuditWriter', () => {
  let fx: Awaited<ReturnType<typeof databaseFixture>>;
  let db: Db;
  beforeAll(async () => {
    fx = await databaseFixture();
    db = fx.db;
  });
  afterAll(async () => fx?.close());

  const event = (tenantId: string, n: number) => ({
    tenantId,
    actor: { type: 'api_key' as const, apiKeyId: `key_${n}`, keyPrefix: 'cbk_test' },
    action: 'claim.create',
    targetType: 'claim',
    targetId: `claim_${n}`,
    result: 'success' as const,
    statusCode: 201,
    requestId: `req-${n}`,
    details: { n },
  });

  it('writes every event of a burst, each once, in fewer statements than events', async () => {
    const tenant = await createTenant(db, { name: 'audit-burst' });
    const writer = createAuditWriter(db);
    // Count the statements the writer sends: the pool's query is what it calls.
    const pool = sqlPoolOf(db);
    const query = pool.query.bind(pool);
    let statements = 0;
    pool.query = ((...args: Parameters<typeof query>) => {
      statements++;
      return query(...args);
    }) as typeof pool.query;
    try {
      const ids = await Promise.all(
        Array.from({ length: 120 }, (_, n) => writer.write(event(tenant.id, n))),
      );
      expect(new Set(ids).size).toBe(120);
      expect(statements).toBeGreaterThan(0);
      expect(statements).toBeLessThan(120);
    } finally {
      pool.query = query;
    }
    const rows = await db.auditEvent.findMany({ where: { tenantId: tenant.id } });
    expect(rows).toHaveLength(120);
    const byTarget = new Map(rows.map((r) => [r.targetId, r]));
    const sample = byTarget.get('claim_7')!;
    expect(sample).toMatchObject({
      actorType: 'api_key',
      apiKeyId: 'key_7',
      keyPrefix: 'cbk_test',
      action: 'claim.create',
      result: 'success',
      statusCode: 201,
      requestId: 'req-7',
      details: { n: 7 },
    });
  });

  it('rejects a bad event alone, keeps its batch neighbours, and settle() waits for the rest', async () => {
    const tenant = await createTenant(db, { name: 'audit-bad' });
    const writer = createAuditWriter(db);
    const good = writer.write(event(tenant.id, 1));
    await expect(writer.write({ ...event(tenant.id, 2), action: 'not an action' })).rejects.toThrow(
      /resource\.verb/,
    );
    // Queued behind event 1's statement, these three go in one batch: the unknown tenant's row
    // fails (foreign key) without taking its neighbours' events with it.
    const batch = await Promise.allSettled([
      writer.write(event(tenant.id, 5)),
      writer.write(event('ten_unknown', 3)),
      writer.write(event(tenant.id, 6)),
    ]);
    expect(batch.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    void writer.write(event(tenant.id, 4));
    await writer.settle();
    await good;
    const targets = (await db.auditEvent.findMany({ where: { tenantId: tenant.id } }))
      .map((r) => r.targetId)
      .sort();
    expect(targets).toEqual(['claim_1', 'claim_4', 'claim_5', 'claim_6']);
  });
});
