import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { Cubicle, CubicleError } from '../src/index.js';
import { startFaultProxy } from './fault-proxy.js';
import type { LiveStack } from './live-stack.js';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** quickStartOf extracts the README's SDK quick start (the ts block after its marker). */
function quickStartOf(): string {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const marker = readme.indexOf('<!-- sdk-quickstart');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (marker < 0 || !block) throw new Error('README: the SDK quick start block is missing');
  return block[1]!;
}

const envelope = (code: string, message: string) => ({
  error: { code, message, request_id: 'proxy-1' },
});

/** sdkSuite: the SDK against a live Cubicle, with faults caused by a loopback proxy. */
export function sdkSuite(live: () => LiveStack, baseEnv: Record<string, string>) {
  it("the README's quick start runs as written and releases its claim on scope exit", async () => {
    // Transpiled as a user's build would (`await using` lowered for Node 20), run as a module
    // that imports @cubicle/sdk by its published name.
    const js = ts.transpileModule(quickStartOf(), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const dir = `${root}packages/sdk/test/.quickstart`;
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/quickstart.mjs`, js);
    try {
      const { stdout } = await run(process.execPath, [`${dir}/quickstart.mjs`], {
        env: { ...baseEnv, CUBICLE_API_KEY: live().apiKey, CUBICLE_URL: live().url },
        timeout: 150_000,
      });
      expect(stdout).toContain('hello from the sandbox');
      expect(stdout).toMatch(/screenshot: \d{3,} bytes/);
      expect(stdout).toContain('step 1\nstep 2\n');
      expect(stdout).toMatch(/^default \{/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    const claims = [];
    for await (const claim of cubicle.claims.list({ pool: 'default' })) claims.push(claim);
    expect(claims.length).toBe(1);
    expect(claims[0]!.status).toBe('released');
    expect(claims[0]!.release_reason).toBe('released_by_client');
  });

  it('a claim whose answer is lost is retried with the same Idempotency-Key: one claim, not two', async () => {
    const admin = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    await admin.pools.apply('retry', {
      image: 'local',
      autoscaling: { min: 0, initial: 0, max: 1 },
    });
    const proxy = await startFaultProxy(live().url, (req, nth) =>
      req.method === 'POST' && nth === 0 ? { kind: 'drop_after_upstream' } : { kind: 'forward' },
    );
    try {
      const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: proxy.url });
      // No desktop: the API answers 202 pending at once; the proxy swallows that answer.
      const claim = await cubicle.claims.create('retry', { wait_seconds: 0 });
      const posts = proxy.seen.filter((r) => r.method === 'POST');
      expect(posts.length).toBe(2);
      expect(posts[0]!.headers['idempotency-key']).toMatch(/^sdk-/);
      expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
      const claims = [];
      for await (const c of admin.claims.list({ pool: 'retry' })) claims.push(c);
      expect(claims.map((c) => c.id)).toEqual([claim.id]);
      await claim.release();
    } finally {
      await proxy.close();
    }
  });

  it('the API killed mid-claim and restarted: the retry with the same key returns the one claim', async () => {
    const admin = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    // No desktop is warm: the claim waits in the API (wait_seconds) while the API is killed.
    await admin.pools.apply('killed', {
      image: 'local',
      autoscaling: { min: 0, initial: 0, max: 1 },
    });
    const port = 41_000 + Math.floor(Math.random() * 9_000);
    let api = await live().startApi(port, baseEnv);
    try {
      const cubicle = new Cubicle({
        apiKey: live().apiKey,
        baseUrl: api.url,
        // Enough retries to outlast a restart on a loaded 2-core machine (with 10, 8-16 s of
        // waiting, the case failed once in a loaded clean-clone run).
        retry: { maxRetries: 30, baseDelayMs: 300, maxDelayMs: 2_000 },
      });
      const claiming = cubicle.claims.create('killed', { wait_seconds: 20 });
      await new Promise((r) => setTimeout(r, 1_500));
      await api.kill();
      // Down for a while: the SDK's retries meet refused connections, then the new process.
      await new Promise((r) => setTimeout(r, 1_000));
      api = await live().startApi(port, baseEnv);
      const claim = await claiming;
      const claims = [];
      for await (const c of admin.claims.list({ pool: 'killed' })) claims.push(c);
      expect(claims.map((c) => c.id)).toEqual([claim.id]);
      await claim.release();
    } finally {
      await api.kill();
    }
  });

  it('a 429 is retried after Retry-After; a 404 or 409 is never retried', async () => {
    await new Cubicle({ apiKey: live().apiKey, baseUrl: live().url }).pools.apply('limits', {
      image: 'local',
      autoscaling: { min: 0, initial: 0, max: 1 },
    });
    const proxy = await startFaultProxy(live().url, (req, nth) =>
      req.path === '/v1/pools/later'
        ? {
            kind: 'answer',
            status: 429,
            headers: { 'retry-after': '120' },
            body: envelope('rate_limited', 'come back in two minutes'),
          }
        : req.path === '/v1/pools/limits' && nth === 0
          ? {
              kind: 'answer',
              status: 429,
              headers: { 'retry-after': '1' },
              body: envelope('rate_limited', 'slow down'),
            }
          : { kind: 'forward' },
    );
    try {
      const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: proxy.url });
      const started = Date.now();
      const pool = await cubicle.pools.get('limits');
      expect(pool.name).toBe('limits');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(proxy.seen.filter((r) => r.path === '/v1/pools/limits').length).toBe(2);

      // A Retry-After beyond the client's maxDelayMs (30 s) is the caller's to wait for.
      const later = (await cubicle.pools.get('later').catch((e: unknown) => e)) as CubicleError;
      expect([later.code, later.status]).toEqual(['rate_limited', 429]);
      expect(proxy.seen.filter((r) => r.path === '/v1/pools/later').length).toBe(1);

      const missing = await cubicle.pools.get('no-such-pool').catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(CubicleError);
      expect((missing as CubicleError).code).toBe('not_found');
      expect(proxy.seen.filter((r) => r.path === '/v1/pools/no-such-pool').length).toBe(1);

      const ticket = await cubicle.viewerTickets.introspect('x.y.z').catch((e: unknown) => e);
      expect((ticket as CubicleError).status).toBeGreaterThanOrEqual(400);
      expect(proxy.seen.filter((r) => r.path === '/v1/viewer/introspect').length).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("a real rate limit's 429 is waited out for its Retry-After, then the call succeeds", async () => {
    const key = await live().limitedKey(2);
    const proxy = await startFaultProxy(live().url, () => ({ kind: 'forward' }));
    try {
      // Retry-After is up to a minute here (the limiter's window): the client allows that long.
      const cubicle = new Cubicle({
        apiKey: key,
        baseUrl: proxy.url,
        retry: { maxDelayMs: 65_000 },
      });
      for (let i = 0; i < 4; i++) await cubicle.request('listPools', { query: { limit: 1 } });
      // Four calls, at most two per window: at least one was answered 429 and sent again.
      expect(proxy.seen.length).toBeGreaterThan(4);
    } finally {
      await proxy.close();
    }
  });

  it('an error keeps its code, message, details and request id from AppError to CubicleError and back', async () => {
    const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    const bad = { image: 'local', autoscaling: { min: 3, initial: 1, max: 2 } };
    const error = (await cubicle.pools.apply('bad', bad).catch((e: unknown) => e)) as CubicleError;
    const raw = await fetch(`${live().url}/v1/pools/bad`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${live().apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(bad),
    });
    const envelopeSent = (await raw.json()) as { error: { request_id: string } };
    expect(error).toBeInstanceOf(CubicleError);
    expect(error.code).toBe('validation_failed');
    expect(error.status).toBe(400);
    expect(error.requestId).toMatch(/.+/);
    expect(error.details?.issues).toBeDefined();
    // The same envelope, but for the request id of each call.
    expect({ error: { ...error.toJSON().error, request_id: 'x' } }).toEqual({
      error: { ...envelopeSent.error, request_id: 'x' },
    });
    expect(CubicleError.fromEnvelope(400, error.toJSON()).toJSON()).toEqual(error.toJSON());
  });

  it('the events iterator resumes after a dropped stream with Last-Event-ID, losing and repeating nothing', async () => {
    const admin = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    await admin.pools.apply('events', {
      image: 'local',
      autoscaling: { min: 1, initial: 1, max: 1 },
    });
    await using claim = await admin.claims.create('events', { wait_seconds: 90 });
    await claim.waitUntilActive();
    const started = await claim.run({
      argv: ['sh', '-c', 'for i in 1 2 3 4 5 6; do echo line $i; sleep 0.3; done'],
    });
    const streamPath = `/v1/runs/${started.id}/events/stream`;
    // The first connection is cut after its third event arrived.
    const proxy = await startFaultProxy(live().url, (req, nth) =>
      req.path === streamPath && nth === 0
        ? { kind: 'cut_body', when: (body) => (body.match(/^id: /gm) ?? []).length >= 3 }
        : { kind: 'forward' },
    );
    try {
      const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: proxy.url });
      const events = [];
      for await (const event of cubicle.runs.events(started.id)) events.push(event);
      const streams = proxy.seen.filter((r) => r.path === streamPath);
      expect(streams.length).toBeGreaterThanOrEqual(2);
      // The cut may split the third event: the reconnect resumes after the last whole one.
      const resumedAfter = Number(streams[1]!.headers['last-event-id']);
      expect(resumedAfter).toBeGreaterThanOrEqual(2);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const stdout = events.filter((e) => e.type === 'stdout').map((e) => String(e.data.text));
      expect(stdout.join('')).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n');
      const run = await cubicle.runs.get(started.id);
      expect(run.status).toBe('succeeded');
      expect(events.at(-1)!.seq).toBe(run.last_seq);
      expect(resumedAfter).toBeLessThan(run.last_seq);
    } finally {
      await proxy.close();
    }
  });

  it('a timeout and an AbortSignal end a call with a typed error and the abort reason', async () => {
    // A server that never answers: a listening socket that reads and says nothing.
    const { createServer } = await import('node:net');
    const silent = createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as { port: number }).port;
      const slow = new Cubicle({
        apiKey: 'k',
        baseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 300,
      });
      const timedOut = (await slow
        .version({ retry: false })
        .catch((e: unknown) => e)) as CubicleError;
      expect(timedOut.code).toBe('request_timeout');
      const controller = new AbortController();
      const pending = slow.pools.get('default', { signal: controller.signal, timeoutMs: 60_000 });
      controller.abort(new Error('caller gave up'));
      await expect(pending).rejects.toThrow('caller gave up');
    } finally {
      silent.close();
    }
  });
}
