import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { newKeyringSpec } from '@cubicle/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedisNamespace } from '../../../test/harness/index.js';

const mainJs = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/** Runs the built API process against the harness's real Postgres and Redis. */
describe('API process', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let redis: ReturnType<typeof createTestRedisNamespace>;
  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createTestRedisNamespace();
  });
  afterAll(async () => {
    await redis?.cleanup();
    await db?.drop();
  });

  it('starts, reports healthy dependencies, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [mainJs], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        CUBICLE_KEYRING: newKeyringSpec(),
        API_HOST: '127.0.0.1',
        API_PORT: '0',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`API did not start: ${out}`)), 20_000);
        child.stdout.on('data', () => {
          // Fastify logs `Server listening at http://127.0.0.1:<port>` once the socket is bound.
          const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(Number(m[1]));
          }
        });
      });
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses to start with a bad variable and names it', async () => {
    const child = spawn(process.execPath, [mainJs], {
      env: {
        ...process.env,
        DATABASE_URL: 'mysql://u:topsecret@h/db',
        REDIS_URL: redis.url,
        API_PORT: '99999',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(78);
    expect(err).toContain('DATABASE_URL');
    expect(err).toContain('API_PORT');
    expect(err).not.toContain('topsecret');
  });

  it('refuses to start without a dependency (no keyring) instead of serving fewer routes', async () => {
    const env: Record<string, string | undefined> = {
      PATH: process.env.PATH,
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      API_PORT: '0',
    };
    const child = spawn(process.execPath, [mainJs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const [code] = await once(child, 'exit');
    expect(code).toBe(78);
    expect(err).toContain('CUBICLE_KEYRING');
  });
});
