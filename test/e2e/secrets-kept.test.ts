import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { createApiKey } from '@cubicle/tenancy';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisOptionsFromUrl } from '../harness/index.js';
import {
  countLeaks,
  dumpRedis,
  dumpTables,
  processEnvironments,
  readFilesUnder,
} from './support/leaks.js';
import { readSse } from './support/run-events.js';
import { startStack, waitFor, type Stack } from './support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// Markers that occur nowhere else: any hit outside the sandbox is a leak.
const tag = () => Math.random().toString(36).slice(2);
const VALUE = `sk-kept-claim-${tag()}`;
const STORED = `sk-kept-stored-${tag()}`;
const LATE = `sk-kept-late-${tag()}`;
const ADMIN_ONLY = `sk-kept-admin-${tag()}`;
/** Payloads, not secrets: what Redis carries for a guest call and a run's stdin. */
const FILE_MARKER = `file-payload-${tag()}-`.repeat(64);
const STDIN_MARKER = `stdin-payload-${tag()}-`.repeat(64);
const SECRETS = [VALUE, STORED, LATE, ADMIN_ONLY];
const PAYLOADS = [FILE_MARKER.slice(0, 40), STDIN_MARKER.slice(0, 40)];

/**
 * Issue 30 §4 end to end: one claim's secrets (given, stored and added later) and two payloads
 * (a files/write content, a run's stdin) through every channel — API answers, run events, SSE,
 * webhooks, the worker's log, every table, every Redis key and the AOF after a rewrite, every
 * process environment, the desktops' session files on the host — 0 times outside the sandbox
 * while the claim lives, and 0 times anywhere once it has ended. Real Postgres, Redis, worker
 * and desktop.
 */
describe('what a claim holds is kept nowhere else, and is gone when it ends', () => {
  let s: Stack;
  let hooks: WebhookReceiver;
  let baseUrl: string;
  let claimId: string;
  let runId: string;
  let aofRedis: Redis;
  let member: { authorization: string };
  const call = (method: string, url: string, payload?: unknown, headers = s.auth) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  /** Every answer the API gave in this file (besides guest calls' read-backs to the holder). */
  const answers: string[] = [];
  const answered = async (res: Awaited<ReturnType<typeof call>>) => {
    answers.push(res.body);
    return res;
  };

  /** readAof rewrites the AOF (BGREWRITEAOF, waited for) and reads every file of it. */
  async function readAof(): Promise<string> {
    await aofRedis.bgrewriteaof();
    await waitFor(
      async () => /aof_rewrite_in_progress:0/.test(await aofRedis.info('persistence')),
      30_000,
      100,
    );
    const [, dir] = (await aofRedis.config('GET', 'dir')) as string[];
    const [, sub] = ((await aofRedis.config('GET', 'appenddirname')) as string[]) ?? [];
    const aofDir = sub ? join(dir!, sub) : dir!;
    const files = (await readdir(aofDir)).filter((f) => f.includes('.aof'));
    expect(files.length).toBeGreaterThan(0);
    return (await Promise.all(files.map((f) => readFile(join(aofDir, f), 'latin1')))).join('\n');
  }

  const sessionFiles = async () => {
    const dirs = (await readdir(tmpdir())).filter((d) => d.startsWith('cubicle-desktop-'));
    return (await Promise.all(dirs.map((d) => readFilesUnder(join(tmpdir(), d))))).join('\n');
  };

  beforeAll(async () => {
    s = await startStack();
    s.workerEnv.LOG_LEVEL = 'debug';
    await s.restartWorker();
    baseUrl = await s.api.listen({ host: '127.0.0.1', port: 0 });
    hooks = await startWebhookReceiver();
    aofRedis = new Redis({ ...redisOptionsFromUrl(s.workerEnv.REDIS_URL!), keyPrefix: '' });
    // The harness's Redis keeps no AOF; this file turns it on to read what a rewrite keeps.
    await aofRedis.config('SET', 'appendonly', 'yes');
    const key = await createApiKey(s.db, { tenantId: s.tenantId, name: 'member', role: 'member' });
    member = { authorization: `Bearer ${key.key}` };
    expect(
      (
        await call('PUT', '/v1/pools/kept', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 2 },
        })
      ).statusCode,
    ).toBe(201);
    const hook = await call('POST', '/v1/webhooks', {
      url: hooks.url,
      events: ['claim.activated', 'claim.ended', 'run.finished'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/kept')).json().counts.warm === 1,
      120_000,
      250,
    );
  });
  afterAll(async () => {
    await aofRedis?.config('SET', 'appendonly', 'no').catch(() => undefined);
    aofRedis?.disconnect();
    await hooks?.close();
    await s?.close();
  });

  it('a member key cannot name an admin-only stored secret (403 secret_not_usable); nothing is taken', async () => {
    expect(
      (await answered(await call('PUT', '/v1/secrets/STORED_TOKEN', { value: STORED }))).json(),
    ).toMatchObject({
      name: 'STORED_TOKEN',
      usable_by: 'admins',
    });
    const claims = await s.db.claim.count();
    const refused = await answered(
      await call(
        'POST',
        '/v1/pools/kept/claims',
        { wait_seconds: 0, stored_secrets: ['STORED_TOKEN'] },
        member,
      ),
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({
      code: 'secret_not_usable',
      details: { secrets: ['STORED_TOKEN'] },
    });
    expect(await s.db.claim.count()).toBe(claims);
  });

  it("a run that names no secret reads the claim's files: its events, SSE and webhooks hold [secret:NAME] only", async () => {
    const claim = await answered(
      await call('POST', '/v1/pools/kept/claims', {
        wait_seconds: 0,
        ttl_seconds: 900,
        // A one-character value: log lines must stay JSON whatever a tenant's values are.
        secrets: { API_TOKEN: VALUE, COLON: ':' },
        stored_secrets: ['STORED_TOKEN'],
      }),
    );
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    // A member naming an admin-only stored secret in a run of this claim: 403 as well (the
    // claim's own copy of STORED_TOKEN is the claim's, usable by its holder).
    expect(
      (await answered(await call('PUT', '/v1/secrets/ADMIN_ONLY', { value: ADMIN_ONLY })))
        .statusCode,
    ).toBe(201);
    const memberRun = await answered(
      await call(
        'POST',
        `/v1/claims/${claimId}/runs`,
        { argv: ['true'], secrets: ['ADMIN_ONLY'] },
        member,
      ),
    );
    expect(memberRun.statusCode).toBe(403);
    expect(memberRun.json().error.code).toBe('secret_not_usable');

    const written = await answered(
      await call('POST', `/v1/claims/${claimId}/files/write`, {
        path: '/tmp/kept-payload.txt',
        content: FILE_MARKER,
      }),
    );
    expect(written.statusCode, written.body).toBe(200);

    const script = [
      'D="$CUBICLE_SECRETS_DIR"',
      'cat "$D/API_TOKEN"; echo',
      'cat "$D/STORED_TOKEN"; echo',
      'while [ ! -f "$D/LATE" ]; do sleep 0.05; done',
      'cat "$D/LATE"; echo',
      'wc -c | tr -d " "',
    ].join('; ');
    const created = await answered(
      await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['/bin/sh', '-c', script] }),
    );
    expect(created.statusCode, created.body).toBe(202);
    runId = created.json().id;
    await waitFor(
      async () => (await call('GET', `/v1/runs/${runId}`)).json().status === 'running',
      30_000,
      50,
    );
    // Added while the run waits for it: the run's redaction has it before the file exists.
    const late = await answered(
      await call('POST', `/v1/claims/${claimId}/secrets`, { name: 'LATE', value: LATE }),
    );
    expect(late.statusCode).toBe(201);
    const stdin = await answered(
      await call('POST', `/v1/runs/${runId}/stdin`, { data: STDIN_MARKER, eof: true }),
    );
    expect(stdin.statusCode, stdin.body).toBe(202);
    await waitFor(
      async () =>
        ['succeeded', 'failed', 'cancelled'].includes(
          (await call('GET', `/v1/runs/${runId}`)).json().status,
        ),
      30_000,
      100,
    );
    const events = await answered(
      await call('GET', `/v1/runs/${runId}/events?after_seq=0&limit=1000`),
    );
    const stdout = (events.json().data as { type: string; data: { text?: string } }[])
      .filter((e) => e.type === 'stdout')
      .map((e) => e.data.text)
      .join('');
    expect(stdout).toBe(
      `[secret:API_TOKEN]\n[secret:STORED_TOKEN]\n[secret:LATE]\n${Buffer.byteLength(STDIN_MARKER)}\n`,
    );
    const sse: string[] = [];
    const read = await readSse(baseUrl, `/v1/runs/${runId}/events/stream`, s.auth, (e) => {
      sse.push(e.data);
    });
    expect(read.ended).toBe(true);
    expect(sse.join('\n')).toContain('[secret:LATE]');
    answers.push(...sse);
    await hooks.waitFor(1, (w) => w.payload.type === 'run.finished', 30_000);
  });

  it('while the claim lives: 0 occurrences outside the sandbox, in every channel', async () => {
    const values = [...SECRETS, ...PAYLOADS];
    expect(countLeaks(answers.join('\n'), values)).toBe(0);
    expect(countLeaks(hooks.received.map((w) => w.body).join('\n'), values)).toBe(0);

    const tables = await dumpTables(s.db);
    expect(tables.tables).toBeGreaterThan(10);
    expect(tables.text).toContain(runId);
    expect(countLeaks(tables.text, values)).toBe(0);

    const redis = await dumpRedis(s.workerEnv.REDIS_URL!);
    expect(redis.keys).toBeGreaterThan(0);
    expect(countLeaks(redis.text, values)).toBe(0);
    // Processed payloads are gone from the AOF once it is rewritten.
    expect(countLeaks(await readAof(), values)).toBe(0);

    const envs = await processEnvironments();
    expect(envs.processes).toBeGreaterThan(2);
    expect(countLeaks(envs.text, SECRETS)).toBe(0);
    expect(countLeaks(await sessionFiles(), SECRETS)).toBe(0);

    const logs = s.worker.output();
    expect(logs.length).toBeGreaterThan(0);
    expect(countLeaks(logs, values)).toBe(0);
    // Every log line is still the JSON pino wrote, with a one-character secret remembered (the
    // API's lines under the same values: apps/api/test/secrets.test.ts).
    const lines = logs.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    const broken = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(broken).toEqual([]);
  });

  it('after the claim ends: its sealed secrets are deleted, and 0 occurrences anywhere', async () => {
    expect(await s.db.claimSecret.count({ where: { claimId } })).toBe(4);
    expect((await answered(await call('DELETE', `/v1/claims/${claimId}`))).statusCode).toBe(200);
    expect(await s.db.claimSecret.count({ where: { claimId } })).toBe(0);
    await hooks.waitFor(1, (w) => w.payload.type === 'claim.ended', 30_000);
    const values = [...SECRETS, ...PAYLOADS];
    expect(countLeaks((await dumpTables(s.db)).text, values)).toBe(0);
    expect(countLeaks((await dumpRedis(s.workerEnv.REDIS_URL!)).text, values)).toBe(0);
    expect(countLeaks(await readAof(), values)).toBe(0);
    expect(countLeaks(hooks.received.map((w) => w.body).join('\n'), values)).toBe(0);
    expect(countLeaks((await processEnvironments()).text, SECRETS)).toBe(0);
    expect(countLeaks(s.worker.output(), values)).toBe(0);
  });
});
