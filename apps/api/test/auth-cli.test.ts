import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApiKeyCreated, Tenant } from '@cubicle/contract/api';
import { hashApiKey } from '@cubicle/tenancy';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, identityFixture, type IdentityFixture } from './auth-fixtures.js';

const cliPath = fileURLToPath(new URL('../../../scripts/cubicle-cli.mjs', import.meta.url));

describe('operator CLI (npm run cubicle)', () => {
  let fx: IdentityFixture;
  let app: FastifyInstance;

  beforeAll(async () => {
    fx = await identityFixture();
    app = await fx.build();
  });
  afterAll(async () => fx?.close());

  /** cli runs the real script as a child process against this file's database. */
  function cli(...args: string[]) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(process.execPath, [cliPath, ...args], {
          env: { ...process.env, DATABASE_URL: fx.databaseUrl },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      },
    );
  }

  it('creates a tenant with quotas and an admin key that works against the API', async () => {
    const made = await cli(
      'tenant',
      'create',
      '--name',
      'Initech',
      '--max-pools',
      '3',
      '--requests-per-minute',
      '120',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    const tenant = Tenant.parse(JSON.parse(made.stdout));
    expect(tenant).toMatchObject({
      name: 'Initech',
      quotas: { max_pools: 3, requests_per_minute: 120, max_sandboxes: 100 },
    });

    const key = await cli(
      'key',
      'create',
      '--tenant',
      tenant.id,
      '--name',
      'bootstrap',
      '--role',
      'admin',
      '--json',
    );
    expect(key.code, key.stderr).toBe(0);
    const created = ApiKeyCreated.parse(JSON.parse(key.stdout));
    expect(created.role).toBe('admin');
    const row = await fx.db.apiKey.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({ tenantId: tenant.id, hash: hashApiKey(created.key) });

    const res = await app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(created.key),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.map((k: { id: string }) => k.id)).toEqual([created.id]);

    const human = await cli(
      'key',
      'create',
      '--tenant',
      tenant.id,
      '--name',
      'second',
      '--role',
      'member',
    );
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('shown this once');
    expect(human.stdout).toMatch(/^cbk_[0-9a-z]{52}$/m);

    const listed = await cli('tenant', 'list', '--json');
    expect(JSON.parse(listed.stdout).map((t: Tenant) => t.id)).toContain(tenant.id);

    const revoked = await cli('key', 'revoke', created.id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain('revoked');
    const after = await fx.build({ keyVerifier: { cacheTtlMs: 0 } });
    const denied = await after.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(created.key),
    });
    expect(denied.statusCode).toBe(401);
  });

  it('refuses bad command lines with exit 2 and unknown ids with exit 1, changing nothing', async () => {
    const before = await fx.db.tenant.count();
    for (const args of [
      ['tenant', 'create'],
      ['tenant', 'create', '--name', 'X', '--max-pools', '-1'],
      ['tenant', 'create', '--name', 'X', '--bogus', '1'],
      ['key', 'create', '--tenant', 'ten_bad', '--name', 'n', '--role', 'admin'],
      ['key', 'create', '--tenant', `ten_${'0'.repeat(26)}`, '--name', 'n', '--role', 'owner'],
      ['frobnicate'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('usage:');
    }
    const missing = await cli(
      'key',
      'create',
      '--tenant',
      `ten_${'0'.repeat(26)}`,
      '--name',
      'n',
      '--role',
      'admin',
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('tenant not found');
    const noKey = await cli('key', 'revoke', `key_${'0'.repeat(26)}`);
    expect(noKey.code).toBe(1);
    expect(await fx.db.tenant.count()).toBe(before);
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('tenant create');
  });
});
