import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SHELL_OUTPUT_MAX_BYTES, ShellRunResult } from '@cubicle/contract/guest';
import { auth, buildGuest, isAlive, post } from './helpers/build-guest.js';

let app: FastifyInstance;
beforeEach(async () => {
  app = await buildGuest();
});
afterEach(async () => {
  await app.close();
});

const run = async (body: Record<string, unknown>) => {
  const res = await post(app, '/v1/shell/run', body);
  return { status: res.status, body: res.body as ShellRunResult & { error?: { code: string } } };
};

describe('shell.run', () => {
  it('runs argv without a shell and a command string through /bin/sh', async () => {
    const argv = await run({ argv: ['echo', 'a b', '$HOME'] });
    expect(argv.status).toBe(200);
    expect(ShellRunResult.parse(argv.body)).toMatchObject({
      exit_code: 0,
      stdout: 'a b $HOME\n',
      timed_out: false,
    });

    const piped = await run({ command: 'printf "x\\ny\\n" | wc -l; echo oops >&2; exit 3' });
    expect(piped.body).toMatchObject({
      exit_code: 3,
      signal: null,
      stdout: '2\n',
      stderr: 'oops\n',
    });
  });

  it('honours cwd, env and stdin', async () => {
    const res = await run({
      command: 'pwd; echo "$GREETING"; cat',
      cwd: '/tmp',
      env: { GREETING: 'hi there' },
      stdin: 'from stdin',
    });
    expect(res.body.stdout).toBe('/tmp\nhi there\nfrom stdin');
  });

  it('returns exact bytes as base64', async () => {
    const res = await run({ argv: ['printf', '\\377\\000\\001'], output_encoding: 'base64' });
    expect(Buffer.from(res.body.stdout, 'base64')).toEqual(Buffer.from([0xff, 0, 1]));
  });

  it('on timeout kills the whole process group and says so', async () => {
    // The backgrounded sleep is a grandchild: only a group kill reaches it.
    const res = await run({ command: 'sleep 30 & echo $!; sleep 30', timeout_ms: 300 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      timed_out: true,
      killed: false,
      exit_code: null,
      signal: 'SIGTERM',
    });
    expect(res.body.duration_ms).toBeLessThan(5000);
    const grandchild = Number(res.body.stdout.trim());
    expect(grandchild).toBeGreaterThan(1);
    expect(isAlive(grandchild)).toBe(false);
    expect(isAlive(res.body.pid)).toBe(false);
  });

  it('caps collected output and flags the truncation', async () => {
    const res = await run({
      command: `head -c ${SHELL_OUTPUT_MAX_BYTES + 5000} /dev/zero | tr '\\0' x`,
    });
    expect(res.body.exit_code).toBe(0);
    expect(res.body.stdout.length).toBe(SHELL_OUTPUT_MAX_BYTES);
    expect(res.body.stdout_truncated).toBe(true);
    expect(res.body.stderr_truncated).toBe(false);
  });

  it('kills a run by run_id, refuses a duplicate run_id, and 404s unknown runs', async () => {
    const pending = run({ argv: ['sleep', '30'], run_id: 'long-one' });
    await new Promise((r) => setTimeout(r, 200));
    const dup = await run({ argv: ['true'], run_id: 'long-one' });
    expect(dup.status).toBe(409);
    expect(dup.body.error?.code).toBe('conflict');
    const kill = await post(app, '/v1/shell/kill', { run_id: 'long-one', signal: 'SIGKILL' });
    expect(kill).toEqual({ status: 200, body: { run_id: 'long-one', signaled: true } });
    const done = await pending;
    expect(done.body).toMatchObject({
      killed: true,
      timed_out: false,
      signal: 'SIGKILL',
      run_id: 'long-one',
    });
    const gone = await post(app, '/v1/shell/kill', { run_id: 'long-one' });
    expect(gone.status).toBe(404);
  });

  it('answers a missing program or cwd with 404 not_found', async () => {
    const program = await run({ argv: ['/nonexistent/program'] });
    expect(program.status).toBe(404);
    expect(program.body.error?.code).toBe('not_found');
    const cwd = await run({ argv: ['true'], cwd: '/nonexistent/dir' });
    expect(cwd.status).toBe(404);
  });

  it('closing the daemon kills what is still running', async () => {
    const pending = run({ command: 'sleep 30', run_id: 'orphan' });
    await new Promise((r) => setTimeout(r, 200));
    await app.close();
    const done = await pending;
    expect(done.body).toMatchObject({ killed: true, signal: 'SIGKILL' });
    app = await buildGuest();
  });
});

describe('auth and bad input', () => {
  it('requires the bearer token everywhere but /healthz', async () => {
    const none = await app.inject({
      method: 'POST',
      url: '/v1/shell/run',
      payload: { argv: ['true'] },
    });
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('unauthenticated');
    const wrong = await app.inject({
      method: 'POST',
      url: '/v1/shell/run',
      headers: { authorization: 'Bearer wrong' },
      payload: { argv: ['true'] },
    });
    expect(wrong.statusCode).toBe(401);
    const ws = await app.inject({ method: 'GET', url: '/v1/shell/stream' });
    expect(ws.statusCode).toBe(401);
    const health = await app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({
      status: 'degraded',
      display: { name: ':999', available: false },
    });
  });

  it('validates bodies with the contract: 400 with a code and the failing fields', async () => {
    const both = await run({ argv: ['true'], command: 'true' });
    expect(both.status).toBe(400);
    expect(both.body.error?.code).toBe('validation_failed');
    const badJson = await app.inject({
      method: 'POST',
      url: '/v1/shell/run',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"argv": [',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error.code).toBe('invalid_json');
    const unknownRoute = await app.inject({ method: 'GET', url: '/v1/nope', headers: auth });
    expect(unknownRoute.json().error.code).toBe('route_not_found');
  });

  it('never answers 5xx to malformed requests', async () => {
    const urls = [
      '/v1/shell/run',
      '/v1/shell/kill',
      '/v1/files/read',
      '/v1/files/write',
      '/v1/files/list',
      '/v1/files/stat',
      '/v1/files/delete',
    ];
    const bodies: unknown[] = [
      null,
      [],
      'text',
      42,
      {},
      { argv: [] },
      { argv: [''] },
      { argv: ['echo', 'a\u0000b'] },
      { command: 'true', env: { X: 'a\u0000' } },
      { argv: ['true'], cwd: '/etc/passwd' },
      { path: 'relative' },
      { path: '/\u0000' },
      { run_id: '../x' },
      { path: '/', recursive: true },
      { command: 'x', timeout_ms: -1 },
      { argv: ['true'], env: { 'BAD-NAME': 'x' } },
      { path: '/proc/self/mem', length: 10 },
    ];
    for (const url of urls) {
      for (const body of bodies) {
        const res = await app.inject({
          method: 'POST',
          url,
          headers: { ...auth, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        expect(res.statusCode, `${url} ${JSON.stringify(body)} → ${res.body}`).toBeLessThan(500);
        expect(res.statusCode).toBeGreaterThanOrEqual(200);
      }
    }
  });
});
