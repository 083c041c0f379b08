// The private servers ask every client for the installation's password, on their unix sockets
// too (issue 30 §1: a process tricked into connecting to the socket must not get in), and data
// directories of older installations (trust auth, no Redis password) are migrated on start,
// whether their server was stopped or still running.
import { statSync, mkdtempSync, chmodSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { redisOptionsFromUrl, startPostgres, startRedis } from '../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'cubicle-embedded-auth-'));
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** withPassword is `url` with another password ('' for none: what a tricked process would send). */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

/** connectError answers how a connection to `url` failed ('' when it got in). */
async function connectError(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return '';
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    return code ?? message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one ?? 0;
  } finally {
    await client.end();
  }
}

/** asOldInstallation turns a data dir back into what older versions left: trust on the socket. */
function asOldInstallation(dataDir: string): void {
  writeFileSync(join(dataDir, 'pg_hba.conf'), 'local all all trust\n');
  rmSync(`${dataDir}.password`);
}

describe('the embedded postgres requires its password', () => {
  it('refuses a connection without the password on its unix socket, and a wrong one', async () => {
    const dataDir = join(root, 'pg');
    const server = await startPostgres({ dataDir, isDurable: false });
    try {
      expect(statSync(`${dataDir}.password`).mode & 0o777).toBe(0o600);
      expect(await selectOne(server.adminUrl)).toBe(1);
      // node-postgres without a password cannot answer the server's SCRAM challenge.
      expect(await connectError(withPassword(server.adminUrl, ''))).toMatch(/SASL|password/);
      // 28P01 invalid_password: the server itself refused.
      expect(await connectError(withPassword(server.adminUrl, 'wrong'))).toBe('28P01');
      expect(readFileSync(join(server.dataDir, 'pg_hba.conf'), 'utf8')).not.toMatch(/trust|peer/);
    } finally {
      await server.stop();
    }
  });

  it('migrates a stopped trust installation before it serves anyone', async () => {
    const dataDir = join(root, 'pg');
    asOldInstallation(dataDir);
    const lines: string[] = [];
    const server = await startPostgres({ dataDir, isDurable: false, log: (l) => lines.push(l) });
    try {
      expect(lines.join('\n')).toContain('password authentication set up');
      expect(await selectOne(server.adminUrl)).toBe(1);
      expect(await connectError(withPassword(server.adminUrl, ''))).toMatch(/SASL|password/);
    } finally {
      await server.stop();
    }
  });

  it('migrates a running trust installation it adopts', async () => {
    const dataDir = join(root, 'pg');
    const first = await startPostgres({ dataDir, isDurable: false });
    try {
      asOldInstallation(dataDir);
      const client = new pg.Client({ connectionString: first.adminUrl });
      await client.connect();
      await client.query('SELECT pg_reload_conf()');
      await client.end();
      const open = withPassword(first.adminUrl, '');
      await expect.poll(() => connectError(open), { timeout: 5_000 }).toBe('');

      const adopted = await startPostgres({ dataDir, ifRunning: 'reuse' });
      expect(adopted.pid).toBe(first.pid);
      expect(adopted.adminUrl).not.toBe(first.adminUrl);
      expect(await selectOne(adopted.adminUrl)).toBe(1);
      expect(await connectError(open)).toMatch(/SASL|password/);
    } finally {
      await first.stop();
    }
  });
});

describe('the embedded redis requires its password', () => {
  it('answers NOAUTH without it, and a restricted user touches only its keys', async () => {
    const dir = join(root, 'redis');
    const server = await startRedis({
      dir,
      users: [
        { name: 'web', keyPattern: 'cubicle:web:*', commands: ['get', 'set', 'del', 'info'] },
      ],
    });
    const clients: Redis[] = [];
    const client = (url: string) => {
      const made = new Redis({
        ...redisOptionsFromUrl(url),
        maxRetriesPerRequest: 0,
        lazyConnect: true,
      });
      made.on('error', () => undefined);
      clients.push(made);
      return made;
    };
    try {
      expect(statSync(`${dir}.password`).mode & 0o777).toBe(0o600);
      const bare = client(`unix://${server.socketPath}`);
      await bare.connect().catch(() => undefined);
      await expect(bare.ping()).rejects.toThrow(/NOAUTH/);
      expect(await client(server.url).ping()).toBe('PONG');

      const web = client(server.urlFor('web'));
      expect(await web.set('cubicle:web:session:x', '1')).toBe('OK');
      await expect(web.set('cubicle:queue:x', '1')).rejects.toThrow(/NOPERM/);
      await expect(web.lpush('cubicle:web:list', '1')).rejects.toThrow(/NOPERM/);
      await expect(web.call('CLIENT', 'KILL', 'TYPE', 'normal')).rejects.toThrow(/NOPERM/);
      // The password never shows on the command line (/proc/<pid>/cmdline is world-readable).
      const password = readFileSync(`${dir}.password`, 'utf8').trim();
      expect(readFileSync(`/proc/${server.pid}/cmdline`, 'utf8')).not.toContain(password);
    } finally {
      for (const made of clients) made.disconnect();
      await server.stop();
    }
  });

  it('sets a password on a running server of an older installation it adopts', async () => {
    const dir = join(root, 'redis');
    const first = await startRedis({ dir });
    const admin = new Redis(redisOptionsFromUrl(first.url));
    try {
      // What older versions ran: no password at all.
      await admin.config('SET', 'requirepass', '');
      admin.disconnect();
      rmSync(`${dir}.password`);
      const adopted = await startRedis({ dir, ifRunning: 'reuse' });
      expect(adopted.pid).toBe(first.pid);
      const again = new Redis(redisOptionsFromUrl(adopted.url));
      expect(await again.ping()).toBe('PONG');
      again.disconnect();
      const bare = new Redis({ path: first.socketPath, maxRetriesPerRequest: 0 });
      bare.on('error', () => undefined);
      await expect(bare.ping()).rejects.toThrow(/NOAUTH/);
      bare.disconnect();
    } finally {
      admin.disconnect();
      await first.stop();
    }
  });
});
