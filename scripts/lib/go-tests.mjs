// The Go step of `npm test`: the Terraform provider's tests (infra/terraform), unit and
// acceptance. It starts a live Cubicle (test/harness/live-cubicle.mjs: embedded Postgres/Redis,
// the built API and worker, local backend), runs `go test ./... -json` with TF_ACC=1 and OpenTofu
// (tofu-tools.mjs), prints each test as it ends, and stops the live Cubicle.
//   node scripts/cubicle.mjs test-go     (bootstrap, then this step alone)
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { findGo, goCacheEnv } from './kube-go.mjs';
import { kubeToolsDir } from './kube-paths.mjs';
import { bold, dim, formatMs, green, red, say, UserError } from './ui.mjs';

const HEARTBEAT_MS = 15_000;

/**
 * startLiveCubicle runs the launcher and resolves with its JSON and a stop function. Its stdin
 * stays a pipe from us: if this process dies, the launcher sees end-of-file and stops too.
 * `env` adds settings for its API and worker (they inherit the launcher's environment).
 */
export function startLiveCubicle(root, { log = say, env = {} } = {}) {
  const child = spawn(process.execPath, [join(root, 'test/harness/live-cubicle.mjs')], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d.toString()).slice(-8000)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      try {
        resolve({ info: JSON.parse(line), stop, pid: child.pid });
      } catch {
        void stop();
        reject(new UserError(`live Cubicle printed something other than JSON: ${line}`));
      }
    });
    child.once('exit', (code, signal) =>
      reject(
        new UserError(
          `live Cubicle exited before it was ready (${signal ?? code}):\n${stderr.trimEnd()}`,
        ),
      ),
    );
    log(dim(`live Cubicle: starting (pid ${child.pid}) …`));
  });
}

/** tallyGoEvents counts top-level tests by their final action; a package that fails without a failed test (a build error) counts as one failure. */
export function tallyGoEvents(events) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const failedTestIn = new Set();
  for (const e of events) {
    if (e.Test && !e.Test.includes('/')) {
      if (e.Action === 'pass') counts.passed += 1;
      if (e.Action === 'fail') {
        counts.failed += 1;
        failedTestIn.add(e.Package);
      }
      if (e.Action === 'skip') counts.skipped += 1;
    }
    if (!e.Test && e.Action === 'fail' && !failedTestIn.has(e.Package)) counts.failed += 1;
  }
  return counts;
}

/**
 * runGoTests runs the provider's Go tests against a live Cubicle and resolves with
 * `{ passed, failed, skipped, code }`. `tofu` is the OpenTofu binary (ensureTofu).
 */
export async function runGoTests(root, { tofu, log = say } = {}) {
  log(bold('▶ go test (infra/terraform, against a live Cubicle)'));
  const toolsDir = kubeToolsDir();
  let go, goEnv, live;
  const started = performance.now();
  try {
    ({ go, env: goEnv } = await findGo(toolsDir, { log }));
    live = await startLiveCubicle(root, { log });
  } catch (error) {
    // Counted as one failure, so the closing line still reports the step.
    log(red(`go test not run: ${error.message}`));
    say(bold('0 passed, 1 failed, 0 skipped (terraform)'));
    return { passed: 0, failed: 1, skipped: 0, code: 1 };
  }
  log(dim(`live Cubicle: ${live.info.endpoint} ready in ${formatMs(performance.now() - started)}`));
  const env = {
    ...process.env,
    ...goCacheEnv(toolsDir),
    ...goEnv,
    TF_ACC: '1',
    TF_ACC_TERRAFORM_PATH: tofu,
    CUBICLE_TEST_ENDPOINT: live.info.endpoint,
    CUBICLE_TEST_ADMIN_KEY: live.info.admin_key,
    CUBICLE_TEST_MEMBER_KEY: live.info.member_key,
    CUBICLE_TEST_REVOKED_KEY: live.info.revoked_key,
    CUBICLE_TEST_OTHER_TENANT_KEY: live.info.other_tenant_key,
    CUBICLE_TEST_OTHER_POOL: live.info.other_pool,
  };
  const events = [];
  const output = new Map(); // test → its output lines, printed when it fails
  let code;
  try {
    const goStarted = performance.now();
    let lastEvent = performance.now();
    const heartbeat = setInterval(() => {
      if (performance.now() - lastEvent > HEARTBEAT_MS)
        log(dim(`  … go test: ${formatMs(performance.now() - goStarted)} (compiling or running)`));
    }, HEARTBEAT_MS);
    const child = spawn(go, ['test', '-json', '-count=1', '-timeout=20m', './...'], {
      cwd: join(root, 'infra/terraform'),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + d.toString()).slice(-8000)));
    const onSignal = () => child.kill('SIGTERM');
    process.once('SIGTERM', onSignal);
    for await (const line of createInterface({ input: child.stdout })) {
      lastEvent = performance.now();
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        log(line); // build output that is not JSON
        continue;
      }
      events.push(e);
      const key = `${e.Package} ${e.Test ?? ''}`;
      if (e.Action === 'output') output.set(key, [...(output.get(key) ?? []), e.Output]);
      const seconds = `${(e.Elapsed ?? 0).toFixed(1)} s`;
      if (e.Test && !e.Test.includes('/')) {
        if (e.Action === 'pass') log(`${green('✓')} ${e.Test} ${dim(seconds)}`);
        if (e.Action === 'skip') log(`${dim('-')} ${e.Test} ${dim('skipped')}`);
        if (e.Action === 'fail') {
          log(`${red('✗')} ${e.Test} ${dim(seconds)}`);
          for (const [k, lines] of output) {
            if (k === key || k.startsWith(`${key}/`)) process.stdout.write(lines.join(''));
          }
        }
      }
      if (!e.Test && e.Action === 'fail') {
        process.stdout.write((output.get(key) ?? []).join(''));
        log(red(`✗ package ${e.Package}`));
      }
    }
    code = await new Promise((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    clearInterval(heartbeat);
    process.off('SIGTERM', onSignal);
    if (code !== 0 && stderr.trim()) log(stderr.trimEnd());
    log(dim(`go test: ${formatMs(performance.now() - goStarted)}`));
  } finally {
    await live.stop();
  }
  const counts = tallyGoEvents(events);
  // go test failing with nothing counted (no toolchain, a broken go.mod) is still a failure.
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  say(
    bold(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped (terraform)`),
  );
  return { ...counts, code };
}
