import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Cubicle } from '../src/index.js';
import { runCli } from './cli-process.js';
import type { LiveStack } from './live-stack.js';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/cubicle.mjs', import.meta.url));
/** The claim the desktop tests share, from `cubicle claim` until `cubicle release`. */
let claimId = '';
const dir = mkdtempSync(join(tmpdir(), 'cubicle-cli-'));
const config = join(dir, 'config.json');

/** cli runs the built bin as a user would; no TTY, so prompts are skipped and progress is lines. */
let baseEnv: Record<string, string> = {};

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      {
        env: { ...baseEnv, HOME: dir, CUBICLE_CONFIG: config, ...env },
        timeout: 150_000,
      },
      (error, stdout, stderr) =>
        resolve({
          code: error ? Number(error.code ?? 1) : 0,
          stdout: String(stdout),
          stderr: String(stderr),
        }),
    );
    child.stdin?.end();
  });
}

/** cliSuite: the `cubicle` bin against a live Cubicle. */
export function cliSuite(live: () => LiveStack, env: Record<string, string>) {
  baseEnv = env;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('login checks the key and stores url and key in a 0600 file; a bad key is exit 3', async () => {
    const bad = await cli(['login', '--url', live().url, '--api-key', 'cbk_wrong']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('unauthenticated');
    const ok = await cli(['login', '--url', live().url, '--api-key', live().apiKey]);
    expect(ok.code).toBe(0);
    expect(statSync(config).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(config, 'utf8'))).toEqual({
      url: live().url,
      api_key: live().apiKey,
    });
    expect(ok.stdout).not.toContain(live().apiKey);
  });

  it('pools apply shows the diff, applies only with --yes, and is a no-op the second time', async () => {
    const file = join(dir, 'pools.yaml');
    writeFileSync(
      file,
      'pools:\n  cli-a:\n    image: local\n    autoscaling: { min: 1, initial: 1, max: 2 }\n  cli-b:\n    image: local\n    autoscaling:\n      min: 0\n      initial: 0\n      max: 1\n',
    );
    const plan = await cli(['pools', 'apply', '-f', file]);
    expect(plan.code).toBe(7);
    expect(plan.stdout).toContain('+ pool cli-a (new)');
    expect(plan.stdout).toContain('+ pool cli-b (new)');
    const applied = await cli(['pools', 'apply', '-f', file, '--yes', '--json']);
    expect(applied.code).toBe(0);
    expect(
      (JSON.parse(applied.stdout) as { applied: { name: string }[] }).applied.map((p) => p.name),
    ).toEqual(['cli-a', 'cli-b']);
    writeFileSync(file, readFileSync(file, 'utf8').replace('max: 1', 'max: 3'));
    const changed = await cli(['pools', 'apply', '-f', file]);
    expect(changed.stdout).toContain('= pool cli-a (unchanged)');
    expect(changed.stdout).toMatch(/~ pool cli-b\n\s+autoscaling: .*"max":1.* -> .*"max":3/);
    const ls = await cli(['pools', 'ls', '--json']);
    expect((JSON.parse(ls.stdout) as { name: string }[]).map((p) => p.name)).toEqual(
      expect.arrayContaining(['cli-a', 'cli-b']),
    );
    const broken = await cli(['pools', 'apply', '-f', join(dir, 'missing.yaml')]);
    expect(broken.code).toBe(2);
  });

  it('claim, shell, screenshot, view and runs logs drive one desktop', async () => {
    const claimed = await cli(['claim', 'cli-a', '--ttl', '600', '--wait', '90']);
    expect(claimed.code).toBe(0);
    const [id, viewer] = claimed.stdout.trim().split('\n');
    expect(id).toMatch(/^clm_[0-9a-z]{26}$/);
    expect(viewer).toMatch(/^viewer: http.*\/embed\//);

    const shell = await cli(['shell', id!, '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(shell).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n' });
    const shellJson = await cli(['shell', id!, '--json', '--', 'echo $((6*7))']);
    expect(JSON.parse(shellJson.stdout)).toMatchObject({ exit_code: 0, stdout: '42\n' });

    const png = join(dir, 'out.png');
    expect((await cli(['screenshot', id!, png])).code).toBe(0);
    expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG');

    const view = await cli(['view', id!, '--json']);
    expect(JSON.parse(view.stdout)).toMatchObject({
      mode: 'view',
      viewer_url: expect.stringContaining('/embed/'),
    });

    const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    const run = await cubicle.runs.create(id!, { argv: ['sh', '-c', 'echo a; sleep 0.5; echo b'] });
    const logs = await cli(['runs', 'logs', '-f', run.id]);
    expect(logs).toMatchObject({ code: 0, stdout: 'a\nb\n' });
    const ndjson = await cli(['runs', 'logs', run.id, '--json']);
    const events = ndjson.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    claimId = id!;
  });

  it('runs start, files and claims get drive the claimed desktop', async () => {
    const env = { ...baseEnv, HOME: dir, CUBICLE_CONFIG: config };
    const started = await runCli(
      [
        'runs',
        'start',
        claimId,
        '-f',
        '--env',
        'WHO=cli',
        '--',
        'sh',
        '-c',
        'echo hello $WHO; echo oops >&2; exit 7',
      ],
      env,
    );
    expect(started).toMatchObject({ code: 7, stdout: 'hello cli\n' });
    expect(started.stderr).toMatch(/^run run_[0-9a-z]+\noops\n$/);
    const detached = await runCli(['runs', 'start', claimId, '--json', '--', 'true'], env);
    const run = JSON.parse(detached.stdout) as { id: string };
    expect((await runCli(['runs', 'ls', claimId], env)).stdout).toContain(run.id);
    expect((await runCli(['runs', 'get', run.id, '--json'], env)).code).toBe(0);

    const local = join(dir, 'bytes.bin');
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13]);
    writeFileSync(local, bytes);
    const wrote = await runCli(
      ['files', 'write', claimId, '/tmp/cli-files/bytes.bin', local, '--parents'],
      env,
    );
    expect(wrote).toMatchObject({ code: 0, stdout: 'wrote /tmp/cli-files/bytes.bin (7 bytes)\n' });
    const fromStdin = await runCli(
      ['files', 'write', claimId, '/tmp/cli-files/note.txt'],
      env,
      'from stdin\n',
    );
    expect(fromStdin.code).toBe(0);
    expect(await runCli(['files', 'read', claimId, '/tmp/cli-files/note.txt'], env)).toMatchObject({
      code: 0,
      stdout: 'from stdin\n',
    });
    const copy = join(dir, 'copy.bin');
    expect(
      (await runCli(['files', 'read', claimId, '/tmp/cli-files/bytes.bin', '-o', copy], env)).code,
    ).toBe(0);
    expect(readFileSync(copy)).toEqual(bytes);
    const ls = await runCli(['files', 'ls', claimId, '/tmp/cli-files', '--json'], env);
    expect(
      (JSON.parse(ls.stdout) as { entries: { name: string }[] }).entries.map((e) => e.name),
    ).toEqual(['bytes.bin', 'note.txt']);
    expect((await runCli(['files', 'read', claimId, '/tmp/cli-files/missing'], env)).code).toBe(4);

    const claim = await runCli(['claims', 'get', claimId, '--json'], env);
    expect(JSON.parse(claim.stdout)).toMatchObject({
      id: claimId,
      status: 'active',
      pool: 'cli-a',
    });
  });

  it('runs logs -f --json | head: the reader closing the pipe ends the command quietly, exit 0', async () => {
    const cubicle = new Cubicle({ apiKey: live().apiKey, baseUrl: live().url });
    const run = await cubicle.runs.create(claimId, {
      argv: [
        'sh',
        '-c',
        'i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); sleep 0.01; done',
      ],
    });
    const child = spawn(process.execPath, [bin, 'runs', 'logs', '-f', '--json', run.id], {
      env: { ...baseEnv, HOME: dir, CUBICLE_CONFIG: config },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let lines = 0;
    // Like `head -n 3`: read three events, then close our end of the pipe.
    child.stdout.on('data', (d: Buffer) => {
      lines += d.toString().split('\n').length - 1;
      if (lines >= 3) child.stdout.destroy();
    });
    const started = Date.now();
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    // It stopped following when the reader left, long before the 30 s run ends.
    expect(Date.now() - started).toBeLessThan(20_000);
    await cubicle.runs.cancel(run.id);
  });

  it('release ends the claim; its commands then fail as not active', async () => {
    expect((await cli(['release', claimId])).code).toBe(0);
    const after = await cli(['shell', claimId, '--', 'true']);
    expect(after.code).toBe(5);
    expect(after.stderr).toContain('claim_not_active');
  });

  it('exit codes: unknown claim 4, usage 2, no login 3, unreachable API 6; --json errors are envelopes', async () => {
    const missing = await cli(['release', `clm_${'0'.repeat(26)}`, '--json']);
    expect(missing.code).toBe(4);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      error: { code: 'not_found' },
      exit_code: 4,
    });
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['pools', 'ls'], { CUBICLE_CONFIG: join(dir, 'none.json') })).code).toBe(3);
    const down = await cli(['pools', 'ls', '--url', 'http://127.0.0.1:9'], {});
    expect(down.code).toBe(6);
  });
}
