// The control-plane images (images/api, images/worker, images/web). There is no Docker engine
// here, so the Dockerfiles are checked the way the desktop image's are: their inputs exist (the
// build context after its .dockerignore, and `turbo prune`'s output, run for real), they run as
// non-root under tini, and their command is this checkout's own build — started here with the
// image's environment, against the real PostgreSQL and Redis, until its probe answers and
// SIGTERM ends it cleanly.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { databasePrefix } from '../harness/context.js';
import {
  createTestDatabase,
  createTestRedisNamespace,
  type TestDatabase,
  type TestRedisNamespace,
} from '../harness/index.js';
import { quoteIdent, withAdmin, withDatabase } from '../harness/postgres-admin.js';
import { freeLoopbackPort } from '../harness/kube/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const IMAGES = ['api', 'worker', 'web'] as const;
type Image = (typeof IMAGES)[number];
const WORKSPACE: Record<Image, string> = {
  api: '@cubicle/api',
  worker: '@cubicle/worker',
  web: '@cubicle/web',
};

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** parseDockerfile: one entry per instruction (continuations joined, comments dropped), with its stage index. */
function parseDockerfile(text: string): { instructions: Instruction[]; stages: string[] } {
  const stages: string[] = [];
  const instructions: Instruction[] = [];
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const [, op, args] = /^(\w+)\s+(.*)$/.exec(trimmed) ?? [];
    if (!op) continue;
    if (op === 'FROM') stages.push(/\bAS\s+(\S+)/i.exec(args!)?.[1] ?? `#${stages.length}`);
    instructions.push({ op, args: args!.replace(/\s+/g, ' ').trim(), stage: stages.length - 1 });
  }
  return { instructions, stages };
}

const dockerfileOf = (image: Image) =>
  parseDockerfile(readFileSync(join(root, `images/${image}/Dockerfile`), 'utf8'));
const execForm = (args: string) => JSON.parse(args) as string[];
/** ENV lines of the final stage as a map (`ENV A=1 B=2`). */
function imageEnv(instructions: Instruction[], finalStage: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of instructions.filter((x) => x.op === 'ENV' && x.stage === finalStage))
    for (const pair of i.args.split(' ')) {
      const [k, ...v] = pair.split('=');
      env[k!] = v.join('=');
    }
  return env;
}

/** ignoredBy: the .dockerignore patterns (only the `**\/x` and plain path forms ours use). */
function ignoredBy(image: Image): (path: string) => boolean {
  const patterns = readFileSync(join(root, `images/${image}/Dockerfile.dockerignore`), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return (path) =>
    patterns.some((p) =>
      p.startsWith('**/')
        ? path.split('/').includes(p.slice(3))
        : path === p || path.startsWith(`${p}/`),
    );
}

function waitForExit(child: ChildProcess, ms: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => reject(new Error(`still running ${ms} ms after SIGTERM`)), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** until polls `url` until it answers `status` (or the process dies). */
async function until(
  url: string,
  status: number,
  child: ChildProcess,
  output: () => string,
  ms = 60_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`exited with ${child.exitCode} before ${url} answered:\n${output()}`);
    const answer = await fetch(url).then(
      async (r) => ({ status: r.status, body: await r.text() }),
      () => undefined,
    );
    if (answer?.status === status) return answer.body;
    if (Date.now() > deadline) throw new Error(`${url} never answered ${status}:\n${output()}`);
    await sleep(250);
  }
}

/** runCmd starts the image's CMD from this checkout (`/opt/cubicle/…` → the repository). */
function runCmd(cmd: string[], env: Record<string, string>, cwd: string) {
  const [node, ...args] = cmd.map((a) => a.replace(/^\/opt\/cubicle\//, root));
  expect(node).toBe('node');
  let output = '';
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

describe('control-plane images: Dockerfile inputs', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'cubicle-images-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };

  for (const image of IMAGES) {
    describe(`images/${image}/Dockerfile`, () => {
      const { instructions, stages } = dockerfileOf(image);
      const final = stages.length - 1;

      it('builds in three stages from one pruned workspace of its own package, with the pinned turbo', () => {
        expect(stages).toEqual(['prune', 'build', `#${final}`]);
        const prune = instructions.find((i) => i.op === 'RUN' && i.args.includes('turbo prune'));
        expect(prune?.args).toBe(`turbo prune ${WORKSPACE[image]} --docker --out-dir /out`);
        const turboArg = instructions.find(
          (i) => i.op === 'ARG' && i.args.startsWith('TURBO_VERSION='),
        );
        expect(turboArg?.args).toBe(`TURBO_VERSION=${rootPackage.devDependencies.turbo}`);
        expect(
          JSON.parse(readFileSync(join(root, `apps/${image}/package.json`), 'utf8')).name,
        ).toBe(WORKSPACE[image]);
        const build = instructions
          .filter((i) => i.stage === 1 && i.op === 'RUN')
          .map((i) => i.args);
        expect(build).toContain('npm ci --ignore-scripts --no-audit --no-fund');
        expect(
          build.some((b) => b.startsWith(`npx turbo run build --filter=${WORKSPACE[image]}...`)),
        ).toBe(true);
        expect(build.some((b) => b.includes('npm prune --omit=dev'))).toBe(true);
      });

      it('copies only inputs that exist in the build context (after its .dockerignore) or in an earlier stage', () => {
        const ignored = ignoredBy(image);
        expect(ignored('node_modules')).toBe(true);
        expect(ignored('apps/api/dist')).toBe(true);
        expect(ignored('.git')).toBe(true);
        const copies = instructions.filter((i) => i.op === 'COPY');
        expect(copies.length).toBeGreaterThan(0);
        for (const copy of copies) {
          const words = copy.args.split(' ');
          const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
          const sources = words.filter((w) => !w.startsWith('--')).slice(0, -1);
          if (from) {
            expect(stages.indexOf(from), copy.args).toBeGreaterThanOrEqual(0);
            expect(stages.indexOf(from), copy.args).toBeLessThan(copy.stage);
            continue;
          }
          for (const source of sources) {
            expect(existsSync(join(root, source)), `${copy.args}: ${source} is missing`).toBe(true);
            if (source !== '.') expect(ignored(source), `${source} is .dockerignored`).toBe(false);
          }
        }
      });

      it("turbo prune's output holds what the build stage compiles and the command runs", () => {
        const out = join(scratch, image);
        const turbo = join(root, 'node_modules/.bin/turbo');
        const result = spawnSync(turbo, ['prune', WORKSPACE[image], '--docker', '--out-dir', out], {
          cwd: root,
          encoding: 'utf8',
          env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' },
        });
        expect(result.status, result.stderr).toBe(0);
        // json/: every manifest npm ci needs, and a lockfile pruned to them.
        expect(existsSync(join(out, 'json/package-lock.json'))).toBe(true);
        expect(existsSync(join(out, `json/apps/${image}/package.json`))).toBe(true);
        // full/: the sources of the package and of each workspace it depends on.
        const deps = Object.keys(
          (
            JSON.parse(readFileSync(join(root, `apps/${image}/package.json`), 'utf8')) as {
              dependencies: Record<string, string>;
            }
          ).dependencies,
        ).filter((d) => d.startsWith('@cubicle/'));
        for (const dep of deps)
          expect(
            existsSync(join(out, 'full/packages', dep.slice('@cubicle/'.length), 'package.json')),
            dep,
          ).toBe(true);
        expect(readdirSync(join(out, 'full/apps'))).toEqual([image]);
        // What the build needs beyond the pruned tree is copied on its own: the shared tsconfig.
        expect(existsSync(join(out, 'full/tsconfig.base.json'))).toBe(false);
        expect(
          instructions.some(
            (i) => i.stage === 1 && i.op === 'COPY' && i.args === 'tsconfig.base.json ./',
          ),
        ).toBe(true);
        const cmd = execForm(instructions.find((i) => i.op === 'CMD')!.args);
        const script = cmd
          .find((a) => a.startsWith('/opt/cubicle/'))!
          .slice('/opt/cubicle/'.length);
        if (image === 'web') expect(script).toBe('node_modules/next/dist/bin/next');
        else {
          // dist/main.js is compiled from src/main.ts, which the pruned tree carries.
          expect(script).toBe(`apps/${image}/dist/main.js`);
          expect(
            existsSync(
              join(out, 'full', script.replace('/dist/', '/src/').replace(/\.js$/, '.ts')),
            ),
          ).toBe(true);
        }
      }, 60_000);

      it('runs as uid 1000 under tini, which forwards SIGTERM to node', () => {
        const runtime = instructions.filter((i) => i.stage === final);
        expect(runtime.find((i) => i.op === 'USER')?.args).toBe('1000:1000');
        expect(execForm(runtime.find((i) => i.op === 'ENTRYPOINT')!.args)).toEqual(['tini', '--']);
        const installs = runtime.filter(
          (i) => i.op === 'RUN' && i.args.includes('apt-get install'),
        );
        expect(
          installs.map((i) =>
            i.args.replace(/.*apt-get install -y --no-install-recommends (\S+).*/, '$1'),
          ),
        ).toEqual(['tini']);
        // The built workspace is copied in as root-owned files (no --chown): the process cannot rewrite its code.
        expect(
          runtime.find((i) => i.op === 'COPY' && i.args.startsWith('--from=build'))?.args,
        ).toBe('--from=build /src /opt/cubicle');
      });
    });
  }
});

describe('control-plane images: each command runs from this build', () => {
  const harness = () => inject('cubicle');
  let db: TestDatabase;
  let redis: TestRedisNamespace;
  const scratch = mkdtempSync(join(tmpdir(), 'cubicle-image-run-'));
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = createTestRedisNamespace();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await redis?.cleanup();
    await db?.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const final = (image: Image) => {
    const { instructions, stages } = dockerfileOf(image);
    const stage = stages.length - 1;
    return {
      env: imageEnv(instructions, stage),
      cmd: execForm(instructions.find((i) => i.op === 'CMD')!.args),
      workdir: instructions.filter((i) => i.op === 'WORKDIR' && i.stage === stage).at(-1)!.args,
    };
  };
  const inCheckout = (path: string) => path.replace(/^\/opt\/cubicle\//, root);

  it('api: cubicle-migrate applies every migration to an empty database, once', async () => {
    const { runId, postgres } = harness();
    const name = `${databasePrefix(runId)}image_${Date.now().toString(36)}`;
    await withAdmin(postgres.adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
    try {
      const dockerfile = readFileSync(join(root, 'images/api/Dockerfile'), 'utf8');
      const link = /ln -s \/opt\/cubicle\/(\S+) \/usr\/local\/bin\/cubicle-migrate/.exec(
        dockerfile,
      )?.[1];
      expect(link).toBe('packages/db/dist/migrate/cli.js');
      expect(
        (
          JSON.parse(readFileSync(join(root, 'packages/db/package.json'), 'utf8')) as {
            bin: Record<string, string>;
          }
        ).bin['cubicle-migrate'],
      ).toBe(`./${link!.replace('packages/db/', '')}`);
      const url = withDatabase(postgres.adminUrl, name);
      const run = () =>
        spawnSync(process.execPath, [join(root, link!)], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, DATABASE_URL: url, NODE_ENV: 'production' },
        });
      const migrations = readdirSync(join(root, 'packages/db/prisma/migrations')).filter((m) =>
        /^\d+_/.test(m),
      );
      const first = run();
      expect(first.stderr).toBe('');
      expect(first.stdout).toContain(`migrate: done (${migrations.length} applied)`);
      const second = run();
      expect(second.stdout).toContain('migrate: done (0 applied)');
    } finally {
      await withAdmin(postgres.adminUrl, (c) =>
        c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
      );
    }
  }, 60_000);

  it('api: cubicle-admin creates a tenant against DATABASE_URL and refuses to run without one', () => {
    const dockerfile = readFileSync(join(root, 'images/api/Dockerfile'), 'utf8');
    expect(dockerfile).toContain(
      'ln -s /opt/cubicle/images/api/cubicle-admin.mjs /usr/local/bin/cubicle-admin',
    );
    const admin = (...args: string[]) =>
      spawnSync(process.execPath, [join(root, 'images/api/cubicle-admin.mjs'), ...args], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, DATABASE_URL: db.url },
      });
    const created = admin('tenant', 'create', '--name', `image-test-${Date.now().toString(36)}`);
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/ten_[0-9a-z]{26}/);
    const none = spawnSync(
      process.execPath,
      [join(root, 'images/api/cubicle-admin.mjs'), 'tenant', 'list'],
      { encoding: 'utf8', env: { PATH: process.env.PATH } },
    );
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('DATABASE_URL is not set');
  });

  it('api: its CMD serves /healthz with the image env; SIGTERM answers the request in flight, then exits 0', async () => {
    const { env, cmd, workdir } = final('api');
    expect(env).toMatchObject({ NODE_ENV: 'production', API_HOST: '0.0.0.0', API_PORT: '8080' });
    const port = await freeLoopbackPort();
    const { child, output } = runCmd(
      cmd,
      {
        ...env,
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.bullPrefix,
        // Required: the API does not start without its keyring (as the chart gives it).
        CUBICLE_KEYRING: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      },
      inCheckout(workdir),
    );
    children.push(child);
    const base = `http://127.0.0.1:${port}`;
    const body = await until(`${base}/healthz`, 200, child, output);
    expect(JSON.parse(body)).toMatchObject({ status: 'ok' });
    // A tenant and key made with the image's own admin CLI, and a pool with nothing warm: a
    // claim then waits (wait_seconds) — a request in flight when SIGTERM arrives.
    const admin = (...args: string[]) => {
      const r = spawnSync(
        process.execPath,
        [join(root, 'images/api/cubicle-admin.mjs'), ...args, '--json'],
        {
          encoding: 'utf8',
          env: { PATH: process.env.PATH, DATABASE_URL: db.url },
        },
      );
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { id: string; key: string };
    };
    const tenant = admin('tenant', 'create', '--name', `drain-${Date.now().toString(36)}`);
    const { key } = admin(
      'key',
      'create',
      '--tenant',
      tenant.id,
      '--name',
      'admin',
      '--role',
      'admin',
    );
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const pool = await fetch(`${base}/v1/pools/drain`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ image: 'x', autoscaling: { min: 0, initial: 0, max: 1 } }),
    });
    expect(pool.status, await pool.text()).toBe(201);
    const started = Date.now();
    const inFlight = fetch(`${base}/v1/pools/drain/claims`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ wait_seconds: 3 }),
    });
    await sleep(700);
    child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer.status).toBe(202);
    expect((await answer.json()) as { status: string }).toMatchObject({ status: 'pending' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
    expect(await waitForExit(child, 20_000), output().slice(-3000)).toBe(0);
  }, 90_000);

  it('worker: its CMD serves /healthz and /readyz (database, Redis, workers), and SIGTERM ends it with 0', async () => {
    const { env, cmd, workdir } = final('worker');
    expect(env).toMatchObject({
      NODE_ENV: 'production',
      CUBICLE_BACKENDS: 'kubernetes',
      WORKER_HEALTH_HOST: '0.0.0.0',
      WORKER_HEALTH_PORT: '8081',
    });
    const port = await freeLoopbackPort();
    // The kubernetes backend contacts its cluster only when a job needs it: a kubeconfig naming a
    // closed loopback port is enough to start.
    const kubeconfig = join(scratch, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 'x' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const { child, output } = runCmd(
      cmd,
      {
        ...env,
        WORKER_HEALTH_HOST: '127.0.0.1',
        WORKER_HEALTH_PORT: String(port),
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.bullPrefix,
        CUBICLE_KEYRING: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
        KUBECONFIG: kubeconfig,
        SWEEP_INTERVAL_MS: '600000',
      },
      inCheckout(workdir),
    );
    children.push(child);
    expect(JSON.parse(await until(`http://127.0.0.1:${port}/healthz`, 200, child, output))).toEqual(
      { status: 'ok' },
    );
    expect(JSON.parse(await until(`http://127.0.0.1:${port}/readyz`, 200, child, output))).toEqual({
      status: 'ok',
      checks: { database: 'ok', redis: 'ok', workers: 'ok' },
    });
    expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
    child.kill('SIGTERM');
    expect(await waitForExit(child, 40_000)).toBe(0);
  }, 90_000);

  it('web: its CMD (next start) serves the sign-in page the chart probes, and SIGTERM ends it', async () => {
    const { env, cmd, workdir } = final('web');
    expect(existsSync(join(root, 'apps/web/.next/BUILD_ID')), 'apps/web is not built').toBe(true);
    const port = await freeLoopbackPort();
    const args = cmd.map((a, i) =>
      cmd[i - 1] === '--hostname' ? '127.0.0.1' : cmd[i - 1] === '--port' ? String(port) : a,
    );
    expect(cmd.slice(-4)).toEqual(['--hostname', '0.0.0.0', '--port', '3000']);
    const { child, output } = runCmd(
      args,
      {
        ...env,
        HOSTNAME: '127.0.0.1',
        PORT: String(port),
        REDIS_URL: redis.url,
        CUBICLE_WEB_SESSION_SECRET: Buffer.alloc(32, 3).toString('base64'),
        CUBICLE_API_URL: 'http://127.0.0.1:1',
      },
      inCheckout(workdir),
    );
    children.push(child);
    const page = await until(`http://127.0.0.1:${port}/login`, 200, child, output, 90_000);
    expect(page).toContain('<html');
    child.kill('SIGTERM');
    expect(await waitForExit(child, 20_000)).not.toBeNull();
  }, 120_000);
});
