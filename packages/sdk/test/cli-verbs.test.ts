// The `cubicle` bin's resource verbs against a real Cubicle API (private PostgreSQL and Redis,
// migrations, the API as its own process; no worker: nothing here needs a desktop). The desktop
// verbs (runs start, files, EPIPE on runs logs -f) are in cli-suite.ts, on the live stack.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import { startStack } from '../../../scripts/bench/lib/stack.mjs';
import { Cubicle } from '../src/index.js';
import { runCli } from './cli-process.js';

let stack: { url: string; adminKey: { key: string }; stop(): Promise<void> };
let env: Record<string, string>;
let cubicle: Cubicle;
const dir = mkdtempSync(join(tmpdir(), 'cubicle-cli-verbs-'));

beforeAll(async () => {
  stack = (await startStack({ tenantName: 'cli', withWorker: false })) as typeof stack;
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    CUBICLE_CONFIG: join(dir, 'none.json'),
    CUBICLE_URL: stack.url,
    CUBICLE_API_KEY: stack.adminKey.key,
  };
  cubicle = new Cubicle({ baseUrl: stack.url, apiKey: stack.adminKey.key });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], input?: string) => runCli(args, env, input);
const jsonOf = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;
const poolNames = async () => (await collect(cubicle.pools.list())).map((p) => p.name);
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('the cubicle CLI: command lines', { timeout: 60_000 }, () => {
  it('a mistyped flag fails with a suggestion and changes nothing on the server', async () => {
    const typo = await cli(['claim', 'default', '--tl', '60']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown flag --tl; did you mean --ttl?');
    const file = join(dir, 'one.yaml');
    writeFileSync(file, 'pools:\n  typo:\n    image: local\n');
    const apply = await cli(['pools', 'apply', '-f', file, '--yse']);
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain('unknown flag --yse; did you mean --yes?');
    expect(await collect(cubicle.claims.list())).toEqual([]);
    expect(await poolNames()).toEqual([]);
  });

  it('--version and per-command --help answer without a server', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(await runCli(['--version'], { PATH: env.PATH! })).toEqual({
      code: 0,
      stdout: `${pkg.version}\n`,
      stderr: '',
    });
    const help = await runCli(['webhooks', 'create', '--help'], { PATH: env.PATH! });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: cubicle webhooks create');
    expect(help.stdout).toContain('--event <type>');
  });
});

describe('the cubicle CLI: pools files', { timeout: 60_000 }, () => {
  it('a broken file or one invalid pool changes nothing; plan then apply creates them all', async () => {
    const file = join(dir, 'pools.yaml');
    writeFileSync(
      file,
      'pools:\n  first:\n    image: local\n    autoscaling: {min: 0, initial: 0, max: 1}\n  second:\n    image: local\n    x: [1,\n',
    );
    const broken = await cli(['pools', 'apply', '-f', file, '--yes']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('nothing was changed');
    expect(broken.stderr).toMatch(/YAML: .*line/);
    // The first pool is valid, the second is not: neither is created (the old CLI created the first).
    writeFileSync(
      file,
      'pools:\n  first:\n    image: local\n    autoscaling: {min: 0, initial: 0, max: 1}\n  second:\n    image: local\n    autoscaling: {min: 2, initial: 1, max: 3}\n    memory_mb: 1\n',
    );
    const invalid = await cli(['pools', 'apply', '-f', file, '--yes']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(
      'pool second: autoscaling.initial: must satisfy min ≤ initial ≤ max',
    );
    expect(invalid.stderr).toContain('pool second: memory_mb: ');
    const invalidJson = await cli(['pools', 'apply', '-f', file, '--yes', '--json']);
    expect(
      jsonOf<{ error: { details: { problems: string[] } } }>(invalidJson).error.details.problems,
    ).toHaveLength(2);
    expect(await poolNames()).toEqual([]);

    writeFileSync(
      file,
      'pools:\n  first:\n    image: local\n    autoscaling: {min: 0, initial: 0, max: 1}\n  second:\n    image: local\n    autoscaling: {min: 0, initial: 0, max: 2}\n',
    );
    const plan = await cli(['pools', 'plan', '-f', file]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('+ pool first (new)');
    expect(plan.stdout).toContain('plan: 2 to create, 0 to update, 0 unchanged');
    expect((await cli(['pools', 'apply', '-f', file, '--dry-run'])).code).toBe(0);
    expect(await poolNames()).toEqual([]);
    const applied = await cli(['pools', 'apply', '-f', file, '--yes']);
    expect(applied.code).toBe(0);
    expect((await poolNames()).sort()).toEqual(['first', 'second']);
    const again = await cli(['pools', 'plan', '-f', file]);
    expect(again.stdout).toContain('plan: 0 to create, 0 to update, 2 unchanged');
  });

  it('pools get shows one pool; pools delete drains it', async () => {
    const got = await cli(['pools', 'get', 'second', '--json']);
    expect(jsonOf<{ name: string; autoscaling: { max: number } }>(got)).toMatchObject({
      name: 'second',
      autoscaling: { max: 2 },
    });
    expect((await cli(['pools', 'get', 'second'])).stdout).toMatch(/^image:\s+"local"$/m);
    expect((await cli(['pools', 'get', 'nope'])).code).toBe(4);
    const deleted = await cli(['pools', 'delete', 'second']);
    expect(deleted.code).toBe(0);
    expect((await cubicle.pools.get('second').catch(() => null))?.state ?? 'gone').not.toBe(
      'active',
    );
  });

  it("the API's validation errors print each field and why, not only `invalid body`", async () => {
    const refused = await cli(['claims', 'ls', '--status', 'sleeping']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('validation_failed');
    expect(refused.stderr).toMatch(/^ {2}query\.status: /m);
  });
});

describe('the cubicle CLI: resource verbs', { timeout: 60_000 }, () => {
  it('claims ls and claims get', async () => {
    const claim = await cubicle.claims.create('first', { wait_seconds: 0 });
    const ls = await cli(['claims', 'ls', '--json']);
    expect(ls.code).toBe(0);
    expect(jsonOf<{ id: string }[]>(ls).map((c) => c.id)).toContain(claim.id);
    expect((await cli(['claims', 'ls', '--pool', 'first'])).stdout).toContain(claim.id);
    const get = await cli(['claims', 'get', claim.id]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(new RegExp(`^id:\\s+${claim.id}$`, 'm'));
    expect(get.stdout).toMatch(/^pool:\s+first$/m);
    expect((await cli(['claims', 'get', `clm_${'0'.repeat(26)}`])).code).toBe(4);
    expect((await cli(['release', claim.id])).code).toBe(0);
  });

  it('secrets: create from stdin, list without values, delete', async () => {
    const value = 'hunter2-very-secret';
    const created = await cli(
      ['secrets', 'create', 'API_TOKEN', '--usable-by', 'members'],
      `${value}\n`,
    );
    expect(created).toMatchObject({ code: 0, stdout: 'stored API_TOKEN v1\n' });
    const ls = await cli(['secrets', 'ls']);
    expect(ls.stdout).toMatch(/^API_TOKEN\s+v1\s+usable by members/m);
    const lsJson = await cli(['secrets', 'ls', '--json']);
    expect(jsonOf<{ name: string }[]>(lsJson).map((s) => s.name)).toEqual(['API_TOKEN']);
    for (const r of [created, ls, lsJson]) expect(r.stdout + r.stderr).not.toContain(value);
    expect((await cli(['secrets', 'create', 'lower'], 'x')).stderr).toMatch(/^ {2}body\.name: /m);
    expect((await cli(['secrets', 'delete', 'API_TOKEN'])).code).toBe(0);
    expect((await cli(['secrets', 'ls'])).stdout).toBe('(no stored secrets)\n');
  });

  it('keys: create prints the key once, ls shows prefixes, revoke stops it', async () => {
    const created = await cli(['keys', 'create', '--name', 'ci', '--role', 'member']);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^cbk_/);
    const ls = await cli(['keys', 'ls', '--json']);
    const listed = jsonOf<{ id: string; name: string; prefix: string }[]>(ls);
    const ci = listed.find((k) => k.name === 'ci')!;
    expect(key.startsWith(ci.prefix)).toBe(true);
    expect(ls.stdout).not.toContain(key);
    expect((await runCli(['claims', 'ls'], { ...env, CUBICLE_API_KEY: key })).code).toBe(0);
    expect((await cli(['keys', 'revoke', ci.id])).code).toBe(0);
    expect((await runCli(['claims', 'ls'], { ...env, CUBICLE_API_KEY: key })).code).toBe(3);
    expect((await cli(['keys', 'ls'])).stdout).toMatch(new RegExp(`^${ci.id}.*revoked`, 'm'));
  });

  it('webhooks: create prints the secret once, ls, deliveries, delete', async () => {
    const created = await cli([
      'webhooks',
      'create',
      '--endpoint',
      'https://93.184.215.14/hooks/cubicle',
      '--event',
      'run.finished,claim.ended',
      '--json',
    ]);
    expect(created.code).toBe(0);
    const hook = jsonOf<{ id: string; secret: string; events: string[] }>(created);
    expect(hook.secret).toMatch(/^whsec_/);
    expect(hook.events).toEqual(['run.finished', 'claim.ended']);
    const ls = await cli(['webhooks', 'ls']);
    expect(ls.stdout).toContain(hook.id);
    expect(ls.stdout).not.toContain(hook.secret);
    const deliveries = await cli(['webhooks', 'deliveries', hook.id, '--json']);
    expect(deliveries.code).toBe(0);
    expect(Array.isArray(jsonOf(deliveries))).toBe(true);
    expect((await cli(['webhooks', 'delete', hook.id])).code).toBe(0);
    expect((await cli(['webhooks', 'ls'])).stdout).toBe('(no webhooks)\n');
    const bad = await cli([
      'webhooks',
      'create',
      '--endpoint',
      'https://93.184.215.14/',
      '--event',
      'run.nope',
    ]);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/^ {2}body\.events\.0: /m);
  });

  it("usage: the tenant's totals for a span; a span that ends before it starts is refused by field", async () => {
    const usage = await cli(['usage', '--json']);
    expect(usage.code).toBe(0);
    expect(
      jsonOf<{ totals: { claims: number }; rows: unknown[] }>(usage).totals.claims,
    ).toBeGreaterThanOrEqual(0);
    expect((await cli(['usage', '--days', '7'])).stdout).toMatch(/^total: claims \d+/m);
    const backwards = await cli([
      'usage',
      '--from',
      '2026-01-02T00:00:00Z',
      '--to',
      '2026-01-01T00:00:00Z',
    ]);
    expect(backwards.code).toBe(5);
    expect(backwards.stderr).toMatch(/^ {2}query\.to: must be after from$/m);
  });
});
