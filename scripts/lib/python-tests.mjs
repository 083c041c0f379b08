// The Python step of `npm test`: the Python SDK's pytest suite (clients/python) against a live
// Cubicle (test/harness/live-cubicle.mjs, the one the Terraform tests use). pytest prints each
// test as it ends (-v); its JUnit report gives the counts of the closing line.
//   node scripts/cubicle.mjs test-python     (bootstrap, then this step alone)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLiveCubicle } from './go-tests.mjs';
import { ensurePythonEnv } from './python-env.mjs';
import { bold, dim, formatMs, red, say } from './ui.mjs';

/** countJunit reads pytest's JUnit XML: tests, failures, errors and skipped of every testsuite. */
export function countJunit(xml) {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const [, attrs] of xml.matchAll(/<testsuite\b([^>]*)>/g)) {
    const n = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(attrs)?.[1] ?? 0);
    const failed = n('failures') + n('errors');
    counts.failed += failed;
    counts.skipped += n('skipped');
    counts.passed += n('tests') - failed - n('skipped');
  }
  return counts;
}

const line = (c) => `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped (python)`;

/**
 * runPythonTests makes the venv (python-env.mjs), starts a live Cubicle, runs pytest in
 * clients/python and resolves with `{ passed, failed, skipped, code }`. Extra args go to pytest.
 */
export async function runPythonTests(root, { log = say, args = [] } = {}) {
  log(bold('▶ pytest (clients/python, against a live Cubicle)'));
  const started = performance.now();
  let python, live;
  try {
    python = await ensurePythonEnv(root, { log });
    // The webhook test receives deliveries on a loopback port, which the API refuses by default.
    live = await startLiveCubicle(root, { log, env: { CUBICLE_WEBHOOKS_ALLOW_PRIVATE: 'true' } });
  } catch (error) {
    // Counted as one failure, so the closing line still reports the step.
    log(red(`pytest not run: ${error.message}`));
    await live?.stop();
    const counts = { passed: 0, failed: 1, skipped: 0 };
    say(bold(line(counts)));
    return { ...counts, code: 1 };
  }
  log(dim(`live Cubicle: ${live.info.endpoint} ready in ${formatMs(performance.now() - started)}`));
  const reportDir = mkdtempSync(join(tmpdir(), 'cubicle-pytest-'));
  const report = join(reportDir, 'junit.xml');
  let code;
  try {
    const pytestStarted = performance.now();
    const child = spawn(python, ['-m', 'pytest', '-v', `--junitxml=${report}`, ...args], {
      cwd: join(root, 'clients/python'),
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        PYTHONDONTWRITEBYTECODE: '1',
        CUBICLE_TEST_ENDPOINT: live.info.endpoint,
        CUBICLE_TEST_ADMIN_KEY: live.info.admin_key,
        CUBICLE_TEST_MEMBER_KEY: live.info.member_key,
        CUBICLE_TEST_REVOKED_KEY: live.info.revoked_key,
        CUBICLE_TEST_OTHER_TENANT_KEY: live.info.other_tenant_key,
        CUBICLE_TEST_RATE_LIMITED_KEY: live.info.rate_limited_key,
        // What the API-kill test needs to start its own API process of the same stack.
        CUBICLE_TEST_NODE: process.execPath,
        CUBICLE_TEST_API_MAIN: join(root, 'apps/api/dist/main.js'),
        CUBICLE_TEST_DATABASE_URL: live.info.database_url,
        CUBICLE_TEST_REDIS_URL: live.info.redis_url,
        CUBICLE_TEST_KEYRING: live.info.keyring,
      },
    });
    const onSignal = () => child.kill('SIGTERM');
    process.once('SIGTERM', onSignal);
    code = await new Promise((resolve) => {
      child.once('error', (error) => {
        log(red(`could not run pytest: ${error.message}`));
        resolve(1);
      });
      child.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    process.off('SIGTERM', onSignal);
    log(dim(`pytest: ${formatMs(performance.now() - pytestStarted)}`));
  } finally {
    await live.stop();
  }
  const counts = existsSync(report)
    ? countJunit(readFileSync(report, 'utf8'))
    : { passed: 0, failed: 0, skipped: 0 };
  rmSync(reportDir, { recursive: true, force: true });
  // pytest failing with nothing counted (a collection error, a crash) is still a failure.
  if (code !== 0 && counts.failed === 0) counts.failed = 1;
  say(bold(line(counts)));
  return { ...counts, code };
}
