import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/index.js';
import { createDb, newId, Prisma, type Db } from '../src/index.js';

/**
 * Every model is written through the generated client and read back field for field from a
 * database built only from the committed migrations (the harness's template).
 */
describe('data model round-trip', () => {
  let handle: Awaited<ReturnType<typeof createTestDatabase>>;
  let db: Db;
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  const later = new Date(now.getTime() + 900_000);
  const ids = {
    tenant: newId('tenant'),
    key: newId('api_key'),
    pool: newId('pool'),
    sandbox: newId('sandbox'),
    claim: newId('claim'),
    secret: newId('secret'),
    ticket: newId('viewer_ticket'),
    run: newId('run'),
    action: newId('action_record'),
    audit: newId('audit_event'),
  };

  beforeAll(async () => {
    handle = await createTestDatabase();
    db = createDb({ databaseUrl: handle.url, maxConnections: 4 });
  });
  afterAll(async () => {
    await db?.$disconnect();
    await handle?.drop();
  });

  it('tenant and api key', async () => {
    const tenant = await db.tenant.create({
      data: { id: ids.tenant, name: 'Acme', allowedEmbedOrigins: ['https://app.acme.test'] },
    });
    expect(tenant).toMatchObject({
      maxPools: 20,
      maxConcurrentClaims: 100,
      allowedEmbedOrigins: ['https://app.acme.test'],
    });
    await db.apiKey.create({
      data: {
        id: ids.key,
        tenantId: ids.tenant,
        name: 'ci',
        role: 'admin',
        prefix: 'cbk_abcd',
        hash: 'h'.repeat(64),
      },
    });
    const key = await db.apiKey.findUniqueOrThrow({ where: { hash: 'h'.repeat(64) } });
    expect(key).toMatchObject({
      role: 'admin',
      prefix: 'cbk_abcd',
      lastUsedAt: null,
      revokedAt: null,
    });
  });

  it('pool, sandbox and claim', async () => {
    await db.pool.create({
      data: {
        id: ids.pool,
        tenantId: ids.tenant,
        name: 'default',
        image: 'cubicle/desktop:1',
        backend: 'local',
        cpuMillis: 1000,
        memoryMb: 2048,
        minSize: 1,
        initialSize: 2,
        maxSize: 4,
        claimTtlSeconds: 900,
        maxClaimLifetimeSeconds: 86_400,
        idleTimeoutSeconds: 120,
        env: { LANG: 'C.UTF-8' },
      },
    });
    expect(await db.pool.findUniqueOrThrow({ where: { id: ids.pool } })).toMatchObject({
      state: 'active',
      generation: 1,
      env: { LANG: 'C.UTF-8' },
      idleTimeoutSeconds: 120,
      deletedAt: null,
    });
    const token = Buffer.from([1, 2, 3, 250]);
    await db.sandbox.create({
      data: {
        id: ids.sandbox,
        tenantId: ids.tenant,
        poolId: ids.pool,
        backend: 'local',
        image: 'cubicle/desktop:1',
        generation: 1,
        guestTokenCiphertext: token,
      },
    });
    const sandbox = await db.sandbox.update({
      where: { id: ids.sandbox },
      data: { state: 'warm', readyAt: now },
    });
    expect(sandbox.state).toBe('warm');
    expect(Buffer.from(sandbox.guestTokenCiphertext!)).toEqual(token);

    await db.claim.create({
      data: {
        id: ids.claim,
        tenantId: ids.tenant,
        poolId: ids.pool,
        sandboxId: ids.sandbox,
        name: 'job-1',
        status: 'active',
        metadata: { job: '42' },
        ttlSeconds: 900,
        idleTimeoutSeconds: 120,
        expiresAt: later,
        maxExpiresAt: later,
      },
    });
    const claim = await db.claim.findUniqueOrThrow({
      where: { id: ids.claim },
      include: { sandbox: true, pool: true },
    });
    expect(claim).toMatchObject({
      status: 'active',
      metadata: { job: '42' },
      releasedAt: null,
      releaseReason: null,
    });
    expect(claim.expiresAt.getTime()).toBe(later.getTime());
    expect(claim.sandbox?.id).toBe(ids.sandbox);
    expect(claim.pool.name).toBe('default');
  });

  it('claim secret, viewer ticket, run and run events, action record', async () => {
    await db.claimSecret.create({
      data: {
        id: ids.secret,
        tenantId: ids.tenant,
        claimId: ids.claim,
        name: 'OPENAI_API_KEY',
        ciphertext: Buffer.from('c1'),
        nonce: Buffer.alloc(12, 7),
        wrappedKey: Buffer.alloc(60, 3),
        keyId: 'k1',
      },
    });
    const secret = await db.claimSecret.findUniqueOrThrow({
      where: { claimId_name: { claimId: ids.claim, name: 'OPENAI_API_KEY' } },
    });
    expect(Buffer.from(secret.nonce)).toEqual(Buffer.alloc(12, 7));
    expect(Buffer.from(secret.wrappedKey)).toEqual(Buffer.alloc(60, 3));

    // Stored secrets are versioned per name: a second version beside the first.
    for (const version of [1, 2]) {
      await db.tenantSecret.create({
        data: {
          id: newId('secret'),
          tenantId: ids.tenant,
          name: 'AGENT_TOKEN',
          version,
          ciphertext: Buffer.from(`v${version}`),
          nonce: Buffer.alloc(12, version),
          wrappedKey: Buffer.alloc(60, version),
          keyId: 'k1',
        },
      });
    }
    const versions = await db.tenantSecret.findMany({
      where: { tenantId: ids.tenant, name: 'AGENT_TOKEN' },
      orderBy: { version: 'asc' },
    });
    expect(versions.map((v) => [v.version, Buffer.from(v.ciphertext).toString()])).toEqual([
      [1, 'v1'],
      [2, 'v2'],
    ]);

    await db.viewerTicket.create({
      data: {
        id: ids.ticket,
        tenantId: ids.tenant,
        claimId: ids.claim,
        sandboxId: ids.sandbox,
        mode: 'view',
        expiresAt: later,
        createdByKeyId: ids.key,
      },
    });
    expect(await db.viewerTicket.findUniqueOrThrow({ where: { id: ids.ticket } })).toMatchObject({
      mode: 'view',
      revokedAt: null,
    });

    await db.run.create({
      data: {
        id: ids.run,
        tenantId: ids.tenant,
        claimId: ids.claim,
        argv: ['python3', 'agent.py'],
        secretNames: ['OPENAI_API_KEY'],
        timeoutSeconds: 600,
        env: { A: '1' },
      },
    });
    await db.runEvent.createMany({
      data: [
        {
          tenantId: ids.tenant,
          runId: ids.run,
          seq: 1,
          type: 'status',
          data: { status: 'running' },
        },
        {
          tenantId: ids.tenant,
          runId: ids.run,
          seq: 2,
          type: 'stdout',
          data: { text: 'hello [REDACTED]' },
        },
      ],
    });
    const run = await db.run.findUniqueOrThrow({
      where: { id: ids.run },
      include: { events: { orderBy: { seq: 'asc' } } },
    });
    expect(run).toMatchObject({
      status: 'queued',
      argv: ['python3', 'agent.py'],
      secretNames: ['OPENAI_API_KEY'],
      exitCode: null,
    });
    expect(run.events.map((e) => [e.seq, e.type, e.data])).toEqual([
      [1, 'status', { status: 'running' }],
      [2, 'stdout', { text: 'hello [REDACTED]' }],
    ]);
    // (run, seq) is the key: a second event 2 of the same run is refused.
    await expect(
      db.runEvent.create({
        data: { tenantId: ids.tenant, runId: ids.run, seq: 2, type: 'stdout', data: {} },
      }),
    ).rejects.toMatchObject({ code: 'P2002' });

    const result = {
      effect: 'confirmed',
      route: 'accessibility',
      evidence: [{ kind: 'value_readback', after: '42' }],
    };
    await db.actionRecord.create({
      data: {
        id: ids.action,
        tenantId: ids.tenant,
        claimId: ids.claim,
        sandboxId: ids.sandbox,
        operation: 'act',
        request: { action: 'click' },
        result,
        effect: 'confirmed',
        durationMs: 12,
      },
    });
    expect((await db.actionRecord.findUniqueOrThrow({ where: { id: ids.action } })).result).toEqual(
      result,
    );
  });

  it('idempotency key and audit event', async () => {
    await db.idempotencyKey.create({
      data: {
        id: 'idem_1',
        tenantId: ids.tenant,
        key: 'abc',
        scope: 'POST /v1/pools/default/claims',
        requestHash: 'f'.repeat(64),
        expiresAt: later,
      },
    });
    const done = await db.idempotencyKey.update({
      where: {
        tenantId_scope_key: {
          tenantId: ids.tenant,
          scope: 'POST /v1/pools/default/claims',
          key: 'abc',
        },
      },
      data: {
        responseStatus: 201,
        responseBody: { id: ids.claim },
        resourceId: ids.claim,
        completedAt: now,
      },
    });
    expect(done).toMatchObject({ responseStatus: 201, responseBody: { id: ids.claim } });

    await db.auditEvent.create({
      data: {
        id: ids.audit,
        tenantId: ids.tenant,
        actorType: 'api_key',
        apiKeyId: ids.key,
        keyPrefix: 'cbk_abcd',
        action: 'claim.create',
        targetType: 'claim',
        targetId: ids.claim,
        result: 'success',
        statusCode: 201,
        requestId: 'req-1',
      },
    });
    expect(await db.auditEvent.findUniqueOrThrow({ where: { id: ids.audit } })).toMatchObject({
      details: {},
      statusCode: 201,
    });
  });

  it('the database enforces claim invariants under any client', async () => {
    // A second live claim on the same sandbox is impossible.
    await expect(
      db.claim.create({
        data: {
          id: newId('claim'),
          tenantId: ids.tenant,
          poolId: ids.pool,
          sandboxId: ids.sandbox,
          name: 'job-2',
          status: 'active',
          ttlSeconds: 60,
          expiresAt: later,
          maxExpiresAt: later,
        },
      }),
    ).rejects.toThrow();
    // A second live claim with the same name in the pool is impossible.
    await expect(
      db.claim.create({
        data: {
          id: newId('claim'),
          tenantId: ids.tenant,
          poolId: ids.pool,
          name: 'job-1',
          ttlSeconds: 60,
          expiresAt: later,
          maxExpiresAt: later,
        },
      }),
    ).rejects.toThrow();
    // Released without a reason is impossible.
    await expect(
      db.claim.update({ where: { id: ids.claim }, data: { status: 'released' } }),
    ).rejects.toThrow();
    // Releasing properly frees the name for a new claim.
    await db.claim.update({
      where: { id: ids.claim },
      data: { status: 'released', releasedAt: now, releaseReason: 'released_by_client' },
    });
    await db.claim.create({
      data: {
        id: newId('claim'),
        tenantId: ids.tenant,
        poolId: ids.pool,
        name: 'job-1',
        ttlSeconds: 60,
        expiresAt: later,
        maxExpiresAt: later,
      },
    });
  });

  it('webhook endpoint, delivery (outbox) and attempts', async () => {
    const webhookId = newId('webhook');
    const deliveryId = newId('webhook_delivery');
    const sealed = new Uint8Array([1, 2, 3, 0, 255]);
    await db.webhookEndpoint.create({
      data: {
        id: webhookId,
        tenantId: ids.tenant,
        url: 'https://hooks.acme.test/cubicle',
        events: ['claim.activated', 'claim.ended'],
        secretCiphertext: sealed,
      },
    });
    const body = '{"type":"claim.ended","timestamp":"2026-12-01T00:00:00.000Z","data":{}}';
    await db.webhookDelivery.create({
      data: {
        id: deliveryId,
        tenantId: ids.tenant,
        webhookId,
        eventId: newId('webhook_event'),
        eventType: 'claim.ended',
        body,
        nextAttemptAt: now,
      },
    });
    await db.webhookAttempt.create({
      data: { tenantId: ids.tenant, deliveryId, attempt: 1, statusCode: 503, durationMs: 40 },
    });
    // One row per attempt number.
    await expect(
      db.webhookAttempt.create({
        data: { tenantId: ids.tenant, deliveryId, attempt: 1, statusCode: 200, durationMs: 5 },
      }),
    ).rejects.toThrow();
    const endpoint = await db.webhookEndpoint.findUniqueOrThrow({
      where: { id: webhookId },
      include: { deliveries: { include: { attempts: true } } },
    });
    expect(endpoint).toMatchObject({
      enabled: true,
      description: null,
      events: ['claim.activated', 'claim.ended'],
      previousSecretCiphertext: null,
    });
    expect([...endpoint.secretCiphertext]).toEqual([...sealed]);
    expect(endpoint.deliveries).toHaveLength(1);
    expect(endpoint.deliveries[0]).toMatchObject({
      status: 'pending',
      attemptCount: 0,
      body,
      lockedUntil: null,
      finishedAt: null,
    });
    expect(endpoint.deliveries[0]!.attempts.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 503],
    ]);
  });

  it('usage rollup rows: one per tenant, pool and hour; progress; late-fact spans', async () => {
    const hour = new Date(Date.UTC(2026, 11, 1, 10));
    const row = { tenantId: ids.tenant, poolId: ids.pool, hour };
    await db.usageHourly.create({ data: { ...row, claims: 3, claimSeconds: 5400.5, runs: 1 } });
    // A recomputed hour replaces its row; a second insert of the same key is refused.
    await expect(db.usageHourly.create({ data: row })).rejects.toThrow();
    expect(
      await db.usageHourly.findUniqueOrThrow({ where: { tenantId_hour_poolId: row } }),
    ).toMatchObject({ claims: 3, claimSeconds: 5400.5, warmSeconds: 0, runs: 1, runSeconds: 0 });

    await db.usageRollupState.create({ data: { id: 'usage-round-trip', rolledTo: hour } });
    expect(
      await db.usageRollupState.findUniqueOrThrow({ where: { id: 'usage-round-trip' } }),
    ).toMatchObject({ rolledTo: hour, previousRolledTo: null });

    const span = await db.usageDirty.create({
      data: { poolId: ids.pool, fromAt: hour, toAt: later },
    });
    expect(typeof span.id).toBe('bigint');
    expect(await db.usageDirty.findUniqueOrThrow({ where: { id: span.id } })).toMatchObject({
      fromAt: hour,
      toAt: later,
    });
  });

  it('handoff, MCP token and collapsed egress events', async () => {
    const handoff = await db.handoff.create({
      data: {
        id: newId('handoff'),
        tenantId: ids.tenant,
        claimId: ids.claim,
        reason: 'a login needs a person',
        ttlSeconds: 300,
        leaseExpiresAt: later,
        claimTtlLeftMs: 600_000n,
      },
    });
    expect(await db.handoff.findUniqueOrThrow({ where: { id: handoff.id } })).toMatchObject({
      state: 'active',
      forWhom: null,
      leaseExpiresAt: later,
      claimTtlLeftMs: 600_000n,
      endedAt: null,
    });

    const token = await db.mcpToken.create({
      data: {
        id: newId('mcp_token'),
        tenantId: ids.tenant,
        claimId: ids.claim,
        tools: ['observe', 'act'],
        expiresAt: later,
      },
    });
    expect(await db.mcpToken.findUniqueOrThrow({ where: { id: token.id } })).toMatchObject({
      tools: ['observe', 'act'],
      expiresAt: later,
      revokedAt: null,
    });

    // One row per claim, minute, verdict and destination: a second report of the same key is
    // refused by the collapse key (the point's reports are upserts on it).
    const event = {
      tenantId: ids.tenant,
      claimId: ids.claim,
      poolId: ids.pool,
      verdict: 'denied',
      minute: now,
      firstAt: now,
      lastAt: now,
      count: 3,
      protocol: 'tcp',
      name: 'denied.example.test',
      port: 443,
      rule: 'default:none',
    };
    const first = await db.egressEvent.create({ data: { id: newId('egress_event'), ...event } });
    expect(await db.egressEvent.findUniqueOrThrow({ where: { id: first.id } })).toMatchObject({
      count: 3,
      ip: '',
      process: null,
      sandboxId: null,
    });
    await expect(
      db.egressEvent.create({ data: { id: newId('egress_event'), ...event } }),
    ).rejects.toThrow();
  });

  it('pauses, recordings, replay links, profiles, snapshots, data keys and the egress CA', async () => {
    const pause = await db.claimPause.create({
      data: {
        id: 'pause-round-trip',
        tenantId: ids.tenant,
        poolId: ids.pool,
        claimId: ids.claim,
        reason: 'idle',
        startedAt: now,
        expiresBefore: later,
      },
    });
    expect(await db.claimPause.findUniqueOrThrow({ where: { id: pause.id } })).toMatchObject({
      reason: 'idle',
      startedAt: now,
      endedAt: null,
      expiresBefore: later,
    });

    await db.recording.create({
      data: { claimId: ids.claim, tenantId: ids.tenant, fps: 5, quality: 'medium', startedAt: now },
    });
    await db.recordingSegment.create({
      data: {
        claimId: ids.claim,
        seq: 0,
        guestId: 'seg-0',
        startedAt: now,
        offsetMs: 0,
        durationMs: 2000,
        bytes: 4096,
        objectKey: 'recordings/c/0',
      },
    });
    expect(
      await db.recording.findUniqueOrThrow({
        where: { claimId: ids.claim },
        include: { segments: true },
      }),
    ).toMatchObject({
      state: 'recording',
      fps: 5,
      sizeBytes: 0n,
      segments: [{ seq: 0, guestId: 'seg-0', durationMs: 2000, bytes: 4096 }],
    });
    // One segment per guest segment: a second upload of the same guest file is refused.
    await expect(
      db.recordingSegment.create({
        data: {
          claimId: ids.claim,
          seq: 1,
          guestId: 'seg-0',
          startedAt: now,
          offsetMs: 2000,
          durationMs: 2000,
          bytes: 1,
          objectKey: 'recordings/c/1',
        },
      }),
    ).rejects.toThrow();

    const link = await db.replayLink.create({
      data: {
        id: newId('replay_link'),
        tenantId: ids.tenant,
        claimId: ids.claim,
        expiresAt: later,
      },
    });
    expect(await db.replayLink.findUniqueOrThrow({ where: { id: link.id } })).toMatchObject({
      expiresAt: later,
      revokedAt: null,
    });

    const profile = await db.profile.create({
      data: { id: newId('profile'), tenantId: ids.tenant, name: 'cust-42' },
    });
    expect(await db.profile.findUniqueOrThrow({ where: { id: profile.id } })).toMatchObject({
      version: 0,
      sizeBytes: 0n,
      liveClaimId: null,
    });
    // One profile per tenant and name.
    await expect(
      db.profile.create({ data: { id: newId('profile'), tenantId: ids.tenant, name: 'cust-42' } }),
    ).rejects.toThrow();

    const snapshot = await db.snapshot.create({
      data: {
        id: newId('snapshot'),
        tenantId: ids.tenant,
        paths: ['Documents'],
        sourceClaimId: ids.claim,
        sourcePool: 'default',
        sourcePoolId: ids.pool,
        expiresAt: later,
      },
    });
    expect(await db.snapshot.findUniqueOrThrow({ where: { id: snapshot.id } })).toMatchObject({
      status: 'creating',
      paths: ['Documents'],
      storedBytes: 0n,
      readyAt: null,
    });

    const wrapped = new Uint8Array([1, 2, 3]);
    await db.tenantDataKey.create({
      data: { tenantId: ids.tenant, wrappedKey: wrapped, keyId: 'k1' },
    });
    const key = await db.tenantDataKey.findUniqueOrThrow({ where: { tenantId: ids.tenant } });
    expect([...key.wrappedKey]).toEqual([1, 2, 3]);
    expect(key.keyId).toBe('k1');

    const ca = await db.egressCa.create({
      data: {
        id: 'ca-round-trip',
        certPem: '-----BEGIN CERTIFICATE-----',
        keyCiphertext: new Uint8Array([4]),
        keyNonce: new Uint8Array([5]),
        wrappedKey: wrapped,
        keyId: 'k1',
      },
    });
    expect(await db.egressCa.findUniqueOrThrow({ where: { id: ca.id } })).toMatchObject({
      certPem: '-----BEGIN CERTIFICATE-----',
      keyId: 'k1',
    });
  });

  it('covers every model of the schema', () => {
    // Adding a model without adding it to this file fails here.
    expect(Object.keys(Prisma.ModelName).sort()).toEqual(
      [
        'ActionRecord',
        'ApiKey',
        'AuditEvent',
        'Claim',
        'ClaimPause',
        'ClaimScreenshot',
        'ClaimSecret',
        'EgressCa',
        'EgressEvent',
        'Handoff',
        'IdempotencyKey',
        'McpToken',
        'Pool',
        'Profile',
        'Recording',
        'RecordingSegment',
        'ReplayLink',
        'Run',
        'RunEvent',
        'Sandbox',
        'Snapshot',
        'Tenant',
        'TenantDataKey',
        'TenantSecret',
        'UsageDirty',
        'UsageHourly',
        'UsageRollupState',
        'ViewerConnection',
        'ViewerTicket',
        'WebhookAttempt',
        'WebhookDelivery',
        'WebhookEndpoint',
      ].sort(),
    );
  });

  it('deleting a tenant removes everything it owns', async () => {
    await db.tenant.delete({ where: { id: ids.tenant } });
    const counts = await Promise.all([
      db.apiKey.count(),
      db.pool.count(),
      db.sandbox.count(),
      db.claim.count(),
      db.claimSecret.count(),
      db.tenantSecret.count(),
      db.viewerTicket.count(),
      db.run.count(),
      db.runEvent.count(),
      db.actionRecord.count(),
      db.idempotencyKey.count(),
      db.auditEvent.count(),
      db.webhookEndpoint.count(),
      db.webhookDelivery.count(),
      db.webhookAttempt.count(),
      db.handoff.count(),
      db.mcpToken.count(),
      db.egressEvent.count(),
    ]);
    expect(counts).toEqual(Array(18).fill(0));
  });
});
