#!/usr/bin/env node
// npm run bench:state -- --json [--store fs|s3|both] [--iterations N] [--forks N] [--fork-runs N]
// Desktops that remember (issue 34), on the real stack (API + worker + sandboxed desktops) and
// each object store back end: `fs` (files in a temp dir) and `s3` (versitygw on loopback, built
// by scripts/lib/s3-tools.mjs). One JSON line per store:
// - plain_claim_p50_ms: a claim of a warm desktop (no state), the floor of this run;
// - profile_claim_p50_ms: a claim with a profile of 50 MB (50 files of 1 MB, random) restored
//   before the answer, once the previous holder's save at release is done; goal ≤ 300 ms;
// - profile_release_save_p50_ms: from the previous holder's DELETE until its save at release
//   (the worker's, browsers quit first) gives the profile up: a claim made sooner waits for it;
// - profile_save_ms: POST …/profile/save after 1 MB of the 50 changed (median); goal ≤ 500 ms;
// - pause_p50_ms / resume_p50_ms: POST …/pause and …/resume of an active claim; goal ≤ 50 ms each;
// - fork10_active_p50_ms: POST /v1/pools/{name}/claims {from_snapshot, count: 10} of a 50 MB
//   snapshot, until it answers with all ten active and restored; goal ≤ 1 s.
// A field whose feature is not in this build is null with `<field>_reason`. Figures depend on
// the machine: the line carries its load and cores.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { versitygwPath, isVersitygwReady } from '../lib/s3-tools.mjs';
import { log, percentile, round, startStack } from './lib/stack.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const isJson = args.includes('--json');
const stores = option('--store', 'both') === 'both' ? ['fs', 's3'] : [option('--store')];
const iterations = Number(option('--iterations', 5));
const forks = Number(option('--forks', 10));
const forkRuns = Number(option('--fork-runs', 1));
const MB = 1024 * 1024;
const PROFILE_FILES = 50;

const timed = async (fn) => {
  const t = performance.now();
  const out = await fn();
  return { ms: performance.now() - t, out };
};
const p50 = (xs) => round(percentile(xs, 50));

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** startS3 runs versitygw (posix back end) on loopback in `dir`, as the test harness does. */
async function startS3(dir) {
  const bin = versitygwPath();
  if (!isVersitygwReady(bin))
    throw new Error(`versitygw is not built (${bin}): node scripts/lib/s3-tools.mjs builds it`);
  const bucket = 'cubicle-bench';
  mkdirSync(join(dir, 'data', bucket), { recursive: true, mode: 0o700 });
  const keys = {
    id: `bench${randomBytes(6).toString('hex')}`,
    secret: randomBytes(24).toString('base64url'),
  };
  const port = await freePort();
  const child = spawn(bin, ['--port', `127.0.0.1:${port}`, 'posix', join(dir, 'data')], {
    detached: true,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH,
      ROOT_ACCESS_KEY_ID: keys.id,
      ROOT_SECRET_ACCESS_KEY: keys.secret,
    },
  });
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    env: {
      CUBICLE_OBJECT_STORE: 's3',
      CUBICLE_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      CUBICLE_S3_REGION: 'us-east-1',
      CUBICLE_S3_BUCKET: bucket,
      CUBICLE_S3_ACCESS_KEY_ID: keys.id,
      CUBICLE_S3_SECRET_ACCESS_KEY: keys.secret,
    },
    stop: () => {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}

/** fill writes 50 files of 1 MB of random bytes into the claim's ~/Documents. */
async function fill(s, claimId) {
  const res = await s.call('POST', `/v1/claims/${claimId}/shell`, {
    command: `mkdir -p ~/Documents && for i in $(seq 1 ${PROFILE_FILES}); do head -c ${MB} /dev/urandom > ~/Documents/f$i; done`,
    timeout_ms: 120_000,
  });
  if (res.status !== 200 || res.body.exit_code !== 0)
    throw new Error(`fill: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
}

async function claim(s, pool, body = {}) {
  const res = await s.call('POST', `/v1/pools/${pool}/claims`, { wait_seconds: 120, ...body });
  if (res.status !== 201)
    throw new Error(`claim: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body;
}
const release = (s, id) => s.call('DELETE', `/v1/claims/${id}`);
/** A route the build does not serve answers 404 route_not_found. */
const isMissing = (res) => res.status === 404 && res.body?.error?.code === 'route_not_found';

/**
 * untilFree answers how long the profile stays held after its claim's release (the worker's save
 * at release), polling its view: the claim timed next then measures the restore alone.
 */
async function untilFree(s, profile) {
  const started = performance.now();
  for (;;) {
    const res = await s.call('GET', `/v1/profiles/${profile}`);
    if (res.status !== 200) throw new Error(`profile: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.claim_id === null) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function benchStore(store) {
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-bench-state-'));
  const s3 = store === 's3' ? await startS3(dir) : null;
  const storeEnv = s3?.env ?? {
    CUBICLE_OBJECT_STORE: 'fs',
    CUBICLE_OBJECT_STORE_DIR: join(dir, 'objects'),
  };
  // The API inherits this process's environment; the worker gets it as its env too.
  Object.assign(process.env, storeEnv);
  const s = await startStack({ workerEnv: storeEnv });
  // The machine is shared: its load at the start and the end of the run go with the figures.
  const line = { bench: 'state', store, load_1m_start: round(loadavg()[0]) };
  try {
    const pool = 'state';
    log(`${store}: warming ${forks + 2} desktops`);
    await s.warmPool(
      pool,
      { image: 'local', autoscaling: { min: 0, initial: forks + 2, max: forks + 4 } },
      forks + 2,
    );

    // The floor: plain warm claims (each released at once; the pool refills).
    const plain = [];
    for (let i = 0; i < iterations; i++) {
      const { ms, out } = await timed(() => claim(s, pool));
      plain.push(ms);
      await release(s, out.id);
    }
    line.plain_claim_p50_ms = p50(plain);

    // Pause and resume.
    const held = await claim(s, pool);
    const pauses = [];
    const resumes = [];
    for (let i = 0; i < iterations; i++) {
      const p = await timed(() => s.call('POST', `/v1/claims/${held.id}/pause`, {}));
      if (isMissing(p.out)) break;
      if (p.out.status !== 200)
        throw new Error(`pause: ${p.out.status} ${JSON.stringify(p.out.body)}`);
      pauses.push(p.ms);
      const r = await timed(() => s.call('POST', `/v1/claims/${held.id}/resume`, {}));
      if (r.out.status !== 200)
        throw new Error(`resume: ${r.out.status} ${JSON.stringify(r.out.body)}`);
      resumes.push(r.ms);
    }
    line.pause_p50_ms = pauses.length ? p50(pauses) : null;
    line.resume_p50_ms = resumes.length ? p50(resumes) : null;
    if (!pauses.length)
      line.pause_p50_ms_reason = line.resume_p50_ms_reason = 'pause is not in this build';

    // Profiles: a 50 MB profile, saved once, then claimed (restored) and saved after 1 MB changed.
    await fill(s, held.id);
    const first = await s.call('POST', '/v1/pools/state/claims', {
      profile: 'bench-50mb',
      wait_seconds: 120,
    });
    if (first.status === 400 && JSON.stringify(first.body).includes('profile')) {
      line.profile_claim_p50_ms = line.profile_save_ms = null;
      line.profile_claim_p50_ms_reason = line.profile_save_ms_reason =
        'profiles are not in this build';
    } else {
      if (first.status !== 201)
        throw new Error(
          `profile claim: ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`,
        );
      await fill(s, first.body.id);
      const saved = await s.call('POST', `/v1/claims/${first.body.id}/profile/save`, {});
      if (saved.status !== 200)
        throw new Error(
          `profile save: ${saved.status} ${JSON.stringify(saved.body).slice(0, 300)}`,
        );
      await release(s, first.body.id);
      const claims = [];
      const saves = [];
      const releaseSaves = [];
      for (let i = 0; i < iterations; i++) {
        releaseSaves.push(await untilFree(s, 'bench-50mb'));
        const { ms, out } = await timed(() => claim(s, pool, { profile: 'bench-50mb' }));
        claims.push(ms);
        const change = await s.call('POST', `/v1/claims/${out.id}/shell`, {
          command: `head -c ${MB} /dev/urandom > ~/Documents/f${1 + (i % PROFILE_FILES)}`,
        });
        if (change.status !== 200) throw new Error(`change: ${change.status}`);
        const save = await timed(() => s.call('POST', `/v1/claims/${out.id}/profile/save`, {}));
        if (save.out.status !== 200)
          throw new Error(
            `save: ${save.out.status} ${JSON.stringify(save.out.body).slice(0, 300)}`,
          );
        saves.push(save.ms);
        await release(s, out.id);
      }
      line.profile_claim_p50_ms = p50(claims);
      line.profile_save_ms = p50(saves);
      line.profile_release_save_p50_ms = p50(releaseSaves);
    }

    // Forks: a 50 MB snapshot of the held claim (its Documents), forked `forks` at once.
    const snap = await s.call('POST', `/v1/claims/${held.id}/snapshots`, { paths: ['Documents'] });
    if (isMissing(snap)) {
      line.fork10_active_p50_ms = null;
      line.fork10_active_p50_ms_reason = 'snapshots are not in this build';
    } else {
      if (snap.status !== 201)
        throw new Error(`snapshot: ${snap.status} ${JSON.stringify(snap.body).slice(0, 300)}`);
      line.snapshot_mb = round(snap.body.size_bytes / MB);
      await release(s, held.id);
      const runs = [];
      for (let r = 0; r < forkRuns; r++) {
        await s.waitFor(
          async () => (await s.call('GET', `/v1/pools/${pool}`)).body.counts.warm >= forks,
          600_000,
          `${forks} warm desktops`,
        );
        const { ms, out } = await timed(() =>
          s.call('POST', `/v1/pools/${pool}/claims`, {
            from_snapshot: snap.body.id,
            count: forks,
            wait_seconds: 120,
          }),
        );
        if (out.status !== 201 || out.body.claims.some((c) => c.status !== 'active'))
          throw new Error(`fork: ${out.status} ${JSON.stringify(out.body).slice(0, 300)}`);
        runs.push(ms);
        await Promise.all(out.body.claims.map((c) => release(s, c.id)));
      }
      line.fork10_active_p50_ms = p50(runs);
      line.forks = forks;
      line.fork_runs = forkRuns;
    }
  } finally {
    await s.stop();
    s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  line.iterations = iterations;
  line.load_1m = round(loadavg()[0]);
  line.cores = cpus().length;
  return line;
}

for (const store of stores) {
  const line = await benchStore(store);
  if (isJson) process.stdout.write(`${JSON.stringify(line)}\n`);
  else log(JSON.stringify(line, null, 2));
}
