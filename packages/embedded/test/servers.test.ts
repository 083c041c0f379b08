// Real postgres and redis-server processes in a temp dir: start, stop, survive a kill -9 of the
// previous run, and leave nothing running behind.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, redisOptionsFromUrl, startPostgres, startRedis } from '../src/index.js';
import { descendantPids } from '../src/proc.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cubicle-embedded-'));
  chmodSync(root, 0o711);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one ?? 0;
  } finally {
    await client.end();
  }
}

describe('startPostgres', () => {
  it('initialises, serves a unix socket URL, and stops with all its processes', async () => {
    const server = await startPostgres({ dataDir: join(root, 'pg'), isDurable: false });
    const password = readFileSync(`${join(root, 'pg')}.password`, 'utf8').trim();
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect(server.adminUrl).toBe(
      `postgresql://postgres:${password}@localhost/postgres?host=${server.socketDir}`,
    );
    expect(await selectOne(server.adminUrl)).toBe(1);
    await server.stop();
    expect(isRunning(server.pid, server.startTime)).toBe(false);
    expect(existsSync(join(server.dataDir, 'postmaster.pid'))).toBe(false);
  });

  it('refuses a second server on the same data dir, adopts it on request, and recovers after kill -9', async () => {
    const dataDir = join(root, 'pg');
    const first = await startPostgres({ dataDir, isDurable: false });
    await expect(startPostgres({ dataDir })).rejects.toThrow(/already running/);
    const adopted = await startPostgres({ dataDir, ifRunning: 'reuse' });
    expect(adopted.isReused).toBe(true);
    expect(adopted.pid).toBe(first.pid);
    await adopted.stop(); // leaves the adopted server alone
    expect(await selectOne(first.adminUrl)).toBe(1);

    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    const lines: string[] = [];
    const second = await startPostgres({
      dataDir,
      isDurable: false,
      log: (line) => lines.push(line),
    });
    expect(lines.some((line) => line.includes('stale postmaster.pid'))).toBe(true);
    expect(await selectOne(second.adminUrl)).toBe(1);
    await second.stop();
  });

  it('starts after kill -9 while a child of the killed server still holds its shared memory', async () => {
    const dataDir = join(root, 'pg');
    const first = await startPostgres({ dataDir, isDurable: false });
    // A child that cannot notice its parent's death (stopped) keeps the old shared memory
    // attached: a new postmaster alone refuses to start beside it.
    const child = descendantPids(first.pid)[0]!;
    process.kill(child, 'SIGSTOP');
    process.kill(first.pid, 'SIGKILL');
    await first.exited;
    const lines: string[] = [];
    const second = await startPostgres({ dataDir, isDurable: false, log: (l) => lines.push(l) });
    expect(lines.some((l) => l.includes(`killing pid ${child}`)), lines.join('\n')).toBe(true);
    expect(isRunning(child)).toBe(false);
    expect(await selectOne(second.adminUrl)).toBe(1);
    await second.stop();
  }, 30_000);

  it('moves the socket to a short directory when the data dir path is too long', async () => {
    const server = await startPostgres({
      dataDir: join(root, 'x'.repeat(100), 'pg'),
      isDurable: false,
    });
    expect(server.socketDir.startsWith('/tmp/cubicle-pg-')).toBe(true);
    expect(await selectOne(server.url('postgres'))).toBe(1);
    await server.stop();
    expect(existsSync(server.socketDir)).toBe(false);
  });
});

describe('startRedis', () => {
  it('answers on its unix socket and keeps AOF data across a restart', async () => {
    const dir = join(root, 'redis');
    const first = await startRedis({ dir, persistence: 'aof' });
    const password = readFileSync(`${dir}.password`, 'utf8').trim();
    expect(first.url).toBe(`unix://:${password}@localhost${join(dir, 'redis.sock')}`);
    const client = new Redis(redisOptionsFromUrl(first.url));
    await client.set('queued', 'job-1');
    client.disconnect();
    await first.stop();
    expect(isRunning(first.pid, first.startTime)).toBe(false);

    const second = await startRedis({ dir, persistence: 'aof' });
    const again = new Redis(redisOptionsFromUrl(second.url));
    expect(await again.get('queued')).toBe('job-1');
    again.disconnect();
    await second.stop();
  });
});
