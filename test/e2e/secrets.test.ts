import { parseKeyring, secretsForRun } from '@cubicle/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countLeaks, dumpRedis } from './support/leaks.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

// Values that occur nowhere else: any hit in a dump is a leak.
const VALUE = `sk-claim-${Math.random().toString(36).slice(2)}-Zq9/+=`;
const STORED = `sk-stored-${Math.random().toString(36).slice(2)}-Wm7`;
const LATE = `sk-late-${Math.random().toString(36).slice(2)}`;

/**
 * Per-claim secrets end to end: sealed by the API, delivered by the worker through the guest
 * driver into the desktop's secrets tmpfs, and found 0 times in Redis, audit events, action
 * records and the worker's logs. Real Postgres, Redis, worker process and desktops.
 */
describe('claim secrets reach the desktop and nothing else', () => {
  let s: Stack;
  let claimId: string;
  let sandboxId: string;
  const call = (method: string, url: string, payload?: unknown, headers = s.auth) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  /** sh runs a command in the claimed desktop as its sandbox user, through the public API. */
  const sh = async (command: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, {
      argv: ['sh', '-c', command],
      timeout_ms: 10_000,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; stderr: string; exit_code: number };
  };

  beforeAll(async () => {
    s = await startStack();
    // Debug logs: the leak check below reads everything the worker wrote.
    s.workerEnv.LOG_LEVEL = 'debug';
    await s.restartWorker();
    expect(
      (
        await call('PUT', '/v1/pools/sec', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 2 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/sec')).json().counts.warm === 1,
      120_000,
      250,
    );
  });
  afterAll(async () => s?.close());

  it('claims a warm desktop with its secrets in one call (no provisioning): files 0600 in a 0700 tmpfs', async () => {
    const stored = await call('PUT', '/v1/secrets/STORED_TOKEN', { value: STORED });
    expect(stored.statusCode).toBe(201);
    expect(stored.json()).toMatchObject({ name: 'STORED_TOKEN', version: 1 });
    const sandboxesBefore = await s.db.sandbox.count();
    const t0 = new Date();
    const claim = await call('POST', '/v1/pools/sec/claims', {
      wait_seconds: 0,
      ttl_seconds: 900,
      secrets: { API_TOKEN: VALUE },
      stored_secrets: ['STORED_TOKEN'],
    });
    expect(claim.statusCode, claim.body).toBe(201);
    expect(claim.body).not.toContain(VALUE);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
    // The warm hit: the sandbox was ready before the request, and no sandbox was provisioned
    // for it (the refill comes after, from reconcile).
    const sandbox = await s.db.sandbox.findUniqueOrThrow({ where: { id: sandboxId } });
    expect(sandbox.readyAt!.getTime()).toBeLessThan(t0.getTime());
    expect(await s.db.sandbox.count({ where: { createdAt: { lt: t0 } } })).toBe(sandboxesBefore);

    // The first guest call after the claim runs after the delivery (same sandbox queue).
    const out = await sh(
      'D="$CUBICLE_SECRETS_DIR"; stat -c "%a %u" "$D" "$D/API_TOKEN" "$D/STORED_TOKEN"; id -u; stat -f -c %T "$D"; ls -A "$D"; cat "$D/API_TOKEN"; echo; cat "$D/STORED_TOKEN"',
    );
    const [dirLine, fileLine, storedLine, uid, fsType, ...rest] = out.stdout.trim().split('\n');
    expect(dirLine).toBe(`700 ${uid}`);
    expect(fileLine).toBe(`600 ${uid}`);
    expect(storedLine).toBe(`600 ${uid}`);
    expect(fsType).toBe('tmpfs');
    expect(rest).toEqual(['API_TOKEN', 'STORED_TOKEN', VALUE, STORED]);

    const list = await call('GET', `/v1/claims/${claimId}/secrets`);
    expect(
      list
        .json()
        .data.map((r: { name: string }) => r.name)
        .sort(),
    ).toEqual(['API_TOKEN', 'STORED_TOKEN']);
    expect(list.body).not.toContain(VALUE);
  });

  it('adds a secret to the live claim (201 SecretRef, no value) and the desktop has it at once', async () => {
    const res = await call('POST', `/v1/claims/${claimId}/secrets`, { name: 'LATE', value: LATE });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(['claim_id', 'created_at', 'id', 'name']);
    expect(res.body).not.toContain(LATE);
    expect((await sh('cat "$CUBICLE_SECRETS_DIR/LATE"')).stdout).toBe(LATE);
    const again = await call('POST', `/v1/claims/${claimId}/secrets`, { name: 'LATE', value: 'x' });
    expect(again.statusCode).toBe(409);
  });

  it('a run that names a claim secret reads it (printenv and the file); its events hold [secret:NAME], never the value', async () => {
    const res = await call('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['/bin/sh', '-c', 'printenv API_TOKEN; cat "$CUBICLE_SECRETS_DIR/API_TOKEN"; echo'],
      secrets: ['API_TOKEN'],
    });
    expect(res.statusCode, res.body).toBe(202);
    const runId = res.json().id as string;
    await waitFor(
      async () =>
        ['succeeded', 'failed', 'cancelled'].includes(
          (await call('GET', `/v1/runs/${runId}`)).json().status,
        ),
      30_000,
      100,
    );
    expect((await call('GET', `/v1/runs/${runId}`)).json()).toMatchObject({
      status: 'succeeded',
      exit_code: 0,
    });
    const events = await call('GET', `/v1/runs/${runId}/events?after_seq=0&limit=1000`);
    const stdout = (events.json().data as { type: string; data: { text?: string } }[])
      .filter((e) => e.type === 'stdout')
      .map((e) => e.data.text)
      .join('');
    // Both reads produced the value; the stored events name it instead.
    expect(stdout).toBe('[secret:API_TOKEN]\n[secret:API_TOKEN]\n');
    expect(countLeaks(events.body, [VALUE])).toBe(0);
  });

  it('a run reads the values through secretsForRun: claim secrets first, then stored ones', async () => {
    const ctx = { db: s.db, keyring: parseKeyring(s.workerEnv.CUBICLE_KEYRING!) };
    expect(await secretsForRun(ctx, s.tenantId, claimId, ['STORED_TOKEN', 'API_TOKEN'])).toEqual([
      { name: 'STORED_TOKEN', value: STORED },
      { name: 'API_TOKEN', value: VALUE },
    ]);
    await expect(
      secretsForRun(ctx, s.tenantId, claimId, ['API_TOKEN', 'NOPE', 'NADA']),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      message: 'unknown secrets: NOPE, NADA',
      details: { unknown_secrets: ['NOPE', 'NADA'] },
    });
    await expect(
      secretsForRun(ctx, s.other.tenantId, claimId, ['API_TOKEN']),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('another tenant cannot list, add, delete or reference them (404), and sees no stored names', async () => {
    const o = s.other.auth;
    const refs = (await call('GET', `/v1/claims/${claimId}/secrets`)).json().data as {
      id: string;
    }[];
    for (const res of [
      await call('GET', `/v1/claims/${claimId}/secrets`, undefined, o),
      await call('POST', `/v1/claims/${claimId}/secrets`, { name: 'X', value: 'y' }, o),
      await call('DELETE', `/v1/claims/${claimId}/secrets/${refs[0]!.id}`, undefined, o),
      await call('DELETE', '/v1/secrets/STORED_TOKEN', undefined, o),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await call('GET', '/v1/secrets', undefined, o)).json().data).toEqual([]);
    // Referencing the first tenant's stored secret by name: no such name in this tenant.
    const refused = await call(
      'POST',
      '/v1/pools/sec/claims',
      { wait_seconds: 0, stored_secrets: ['STORED_TOKEN'] },
      o,
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.unknown_secrets).toEqual(['STORED_TOKEN']);
    expect(await s.db.claimSecret.count({ where: { tenantId: s.other.tenantId } })).toBe(0);
    expect((await call('GET', `/v1/claims/${claimId}/secrets`)).json().data).toHaveLength(3);
  });

  it('refusals change nothing: a value over 64 KiB is 413, unknown stored names are 400 naming them', async () => {
    const before = await Promise.all([
      s.db.claim.count(),
      s.db.claimSecret.count(),
      s.db.tenantSecret.count(),
      s.db.sandbox.count({ where: { state: 'warm' } }),
    ]);
    const big = 'x'.repeat(65_537);
    const r1 = await call('POST', '/v1/pools/sec/claims', {
      wait_seconds: 0,
      secrets: { BIG: big },
    });
    expect(r1.statusCode).toBe(413);
    expect(r1.json().error).toMatchObject({ code: 'payload_too_large', details: { name: 'BIG' } });
    const r2 = await call('POST', `/v1/claims/${claimId}/secrets`, { name: 'BIG', value: big });
    expect(r2.statusCode).toBe(413);
    const r3 = await call('PUT', '/v1/secrets/BIG', { value: big });
    expect(r3.statusCode).toBe(413);
    const r4 = await call('POST', '/v1/pools/sec/claims', {
      wait_seconds: 0,
      stored_secrets: ['MISSING_ONE', 'STORED_TOKEN', 'MISSING_TWO'],
    });
    expect(r4.statusCode).toBe(400);
    expect(r4.json().error.message).toContain('MISSING_ONE, MISSING_TWO');
    expect(r4.json().error.details.unknown_secrets).toEqual(['MISSING_ONE', 'MISSING_TWO']);
    const r5 = await call('POST', '/v1/pools/sec/claims', {
      wait_seconds: 0,
      secrets: { 'lower-case': 'v' },
    });
    expect(r5.statusCode).toBe(400);
    expect(
      await Promise.all([
        s.db.claim.count(),
        s.db.claimSecret.count(),
        s.db.tenantSecret.count(),
        s.db.sandbox.count({ where: { state: 'warm' } }),
      ]),
    ).toEqual(before);
  });

  it('DELETE removes the file from the desktop before the claim ends', async () => {
    const refs = (await call('GET', `/v1/claims/${claimId}/secrets`)).json().data as {
      id: string;
      name: string;
    }[];
    const id = refs.find((r) => r.name === 'API_TOKEN')!.id;
    expect((await call('DELETE', `/v1/claims/${claimId}/secrets/${id}`)).statusCode).toBe(204);
    expect((await call('GET', `/v1/claims/${claimId}`)).json().status).toBe('active');
    const out = await sh('ls -A "$CUBICLE_SECRETS_DIR"');
    expect(out.stdout.trim().split('\n')).toEqual(['LATE', 'STORED_TOKEN']);
    expect((await call('DELETE', `/v1/claims/${claimId}/secrets/${id}`)).statusCode).toBe(404);
  });

  it('an agent typing a secret: its ActionRecord keeps [secret:NAME], never the value', async () => {
    const launched = await call('POST', `/v1/claims/${claimId}/windows/launch`, {
      argv: [
        '/usr/bin/python3',
        '-c',
        "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='secret-entry'); w.add(Gtk.Entry()); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
      ],
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    const windowId = launched.json().window.window_id as number;
    const snap = await call('POST', `/v1/claims/${claimId}/observe`, {
      window_id: windowId,
      include_screenshot: false,
    });
    const entry = (snap.json().elements as { element_token: string; role: string }[]).find(
      (e) => e.role === 'text' || e.role === 'entry',
    )!;
    const typed = await call('POST', `/v1/claims/${claimId}/act`, {
      window_id: windowId,
      element_token: entry.element_token,
      action: 'type_text',
      text: STORED,
    });
    expect(typed.statusCode, typed.body).toBe(200);
    // The caller (the claim's holder) gets the read-back; what is stored does not.
    expect(typed.body).toContain(STORED);
    const records = await s.db.actionRecord.findMany({ where: { claimId } });
    const stored = JSON.stringify(records);
    expect(records.length).toBeGreaterThan(0);
    expect(stored).toContain('[secret:STORED_TOKEN]');
    expect(countLeaks(stored, [STORED])).toBe(0);
  });

  it('a pending claim receives its secrets once a desktop is provisioned for it', async () => {
    expect(
      (
        await call('PUT', '/v1/pools/cold', {
          image: 'local',
          autoscaling: { min: 0, initial: 0, max: 1 },
        })
      ).statusCode,
    ).toBe(201);
    const pending = await call('POST', '/v1/pools/cold/claims', {
      wait_seconds: 0,
      secrets: { COLD_TOKEN: VALUE },
    });
    expect(pending.statusCode).toBe(202);
    const coldId = pending.json().id as string;
    await waitFor(
      async () => (await call('GET', `/v1/claims/${coldId}`)).json().status === 'active',
      120_000,
      250,
    );
    let seen = '';
    await waitFor(
      async () => {
        const res = await call('POST', `/v1/claims/${coldId}/shell`, {
          argv: ['sh', '-c', 'cat "$CUBICLE_SECRETS_DIR/COLD_TOKEN" 2>/dev/null'],
        });
        seen = res.json().stdout ?? '';
        return seen === VALUE;
      },
      30_000,
      250,
    );
    expect(seen).toBe(VALUE);
    expect((await call('DELETE', `/v1/claims/${coldId}`)).statusCode).toBe(200);
  });

  it('the values appear 0 times in Redis (every key), audit events, action records and worker logs', async () => {
    const values = [VALUE, STORED, LATE];
    const redis = await dumpRedis(s.workerEnv.REDIS_URL!);
    expect(redis.keys).toBeGreaterThan(0);
    // Job data of the installation is in the dump (finished jobs), so it reads job data.
    expect(redis.text).toContain('returnvalue');
    expect(countLeaks(redis.text, values)).toBe(0);

    const audit = await call('GET', '/v1/audit-events?limit=200');
    expect(audit.statusCode).toBe(200);
    expect(audit.json().data.length).toBeGreaterThan(3);
    const auditRows = JSON.stringify(await s.db.auditEvent.findMany());
    expect(countLeaks(audit.body + auditRows, values)).toBe(0);

    const actions = JSON.stringify(await s.db.actionRecord.findMany());
    expect(countLeaks(actions, values)).toBe(0);

    const sealed = await s.db.claimSecret.findMany();
    const storedRows = await s.db.tenantSecret.findMany();
    const bytes = Buffer.concat(
      [...sealed, ...storedRows].flatMap((r) => [
        Buffer.from(r.ciphertext),
        Buffer.from(r.wrappedKey),
      ]),
    ).toString('latin1');
    expect(countLeaks(bytes, values)).toBe(0);

    const logs = s.worker.output();
    expect(logs.length).toBeGreaterThan(0);
    expect(countLeaks(logs, values)).toBe(0);
  });
});
