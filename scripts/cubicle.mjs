#!/usr/bin/env node
// The one script behind the README's commands. It runs before `npm ci`, so it uses Node only.
//   start      bootstrap, then Postgres + Redis (embedded, under .cubicle/), migrations, the API
//   test       bootstrap, etcd + kube-apiserver for the Kubernetes suites (built from the Go
//              module proxy into ~/.cache/cubicle-tools the first time), then `vitest run`
//              (extra args pass through), the Terraform provider's Go tests (go-tests.mjs;
//              CUBICLE_SKIP_GO_TESTS=1 skips them), the Python SDK's pytest suite (python-tests.mjs;
//              CUBICLE_SKIP_PYTHON_TESTS=1 skips it) and a one-line summary
//   test-go    bootstrap, then only the Terraform provider's Go tests against a live Cubicle
//   test-python bootstrap, then only the Python SDK's tests against a live Cubicle (args: pytest's)
//   migrate    bootstrap, then migrate DATABASE_URL or the embedded database
//   bootstrap  apt packages when missing, `npm ci` when needed, `turbo run build`
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureAptPackages, APT_PACKAGES } from './lib/apt.mjs';
import { ensureHelm } from './lib/helm-tools.mjs';
import { ensureKubeTools } from './lib/kube-tools.mjs';
import { migrateCommand } from './lib/migrate-cmd.mjs';
import { ensureNodeModules } from './lib/npm-install.mjs';
import { run } from './lib/run.mjs';
import { startCubicle } from './lib/start.mjs';
import { buildTofuBeside, printFailures, runVitest } from './lib/test-run.mjs';
import { runGoTests } from './lib/go-tests.mjs';
import { ensurePythonEnv } from './lib/python-env.mjs';
import { runPythonTests } from './lib/python-tests.mjs';
import {
  besideVitest,
  startDebianLayers,
  startImages,
  startNodeTools,
} from './lib/real-node-beside.mjs';
import { ensureTofu } from './lib/tofu-tools.mjs';
import { ensureVersitygw } from './lib/s3-tools.mjs';
import { ensureEgressRelay } from './tools/egress-relay/tool.mjs';
import { bold, dim, formatMs, red, say, step, timings, UserError, yellow } from './lib/ui.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Children inherit these: no telemetry or update checks (they mean DNS lookups and delays here).
Object.assign(process.env, {
  NEXT_TELEMETRY_DISABLED: '1',
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  CHECKPOINT_DISABLE: '1',
});

/**
 * bootstrap installs what Cubicle needs and builds it. `alongside` starts once the apt packages
 * are in and runs beside `npm ci` and the build; its promise is returned for the caller to await
 * (npm test builds its Go tools there). Measured on a fresh 2-core machine: apt done → vitest
 * start 1,112 → 1,045 s; both sides are CPU-bound, so npm ci took 97 s instead of 45 s beside
 * the Go build, and the gain is the downloads and the builds' single-threaded stretches.
 */
async function bootstrap({ alongside } = {}) {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    throw new UserError(
      `Node ${process.versions.node} is too old: Cubicle needs Node 20.19 or newer`,
    );
  }
  await step(`apt packages (${Object.values(APT_PACKAGES).flat().join(', ')})`, ensureAptPackages);
  const beside = alongside?.();
  // Awaited by the caller; until then a failure must not count as an unhandled rejection.
  beside?.catch(() => undefined);
  try {
    await step('npm dependencies', () => ensureNodeModules(root));
    await step('build (turbo run build)', () =>
      run(join(root, 'node_modules/.bin/turbo'), ['run', 'build', '--output-logs=new-only'], {
        cwd: root,
      }),
    );
  } catch (error) {
    // The process ends when the work beside it does: say why it is still running.
    if (beside)
      say(
        dim('the work started beside the bootstrap finishes first (it is kept for the next run)'),
      );
    throw error;
  }
  // Only the bootstrap's own steps: the work beside it records its steps in `timings` too.
  const own = timings.filter((t) => /^(apt|npm|build) /.test(t.name));
  say(dim(`bootstrap: ${own.map((t) => `${t.name.split(' ')[0]} ${formatMs(t.ms)}`).join(', ')}`));
  return beside;
}

/**
 * buildTestTools builds (once per machine) or finds the Go tools the tests run before Vitest
 * starts: etcd and kube-apiserver for the Kubernetes suites, the egress relay, helm for the chart
 * tests and versitygw for the S3 suites. The real-node suite's tools and images start here too but
 * go on beside Vitest (real-node-beside.mjs): their promises are returned, never rejected.
 */
async function buildTestTools() {
  // mmdebstrap: downloads and dpkg, mostly one core, niced; beside the Go builds from the start.
  const debianLayers = startDebianLayers();
  await step('kube tools (etcd, kube-apiserver)', () => ensureKubeTools());
  // kubelet & co. share kube-apiserver's module and build cache: after it, never beside it.
  const nodeTools = startNodeTools();
  // The local egress point's splice(2) relay, which the egress suites run through (≈ 10 s, once).
  await step('egress relay (local egress data path)', () => ensureEgressRelay());
  // The Helm chart's tests render helm/cubicle with helm built the same way (≈ 2 min, once).
  await step('helm (chart tests)', () => ensureHelm());
  // The object store's S3 suites run against versitygw built the same way (≈ 4 min, once); the
  // run's S3 server starts with Vitest, so it is built before.
  await step('versitygw (object store S3 tests)', () => ensureVersitygw());
  return { debianLayers, nodeTools };
}

/** relayForStart builds the egress relay for `npm start`, unless the worker is told not to use it. */
async function relayForStart() {
  if (process.env.CUBICLE_EGRESS_RELAY) return; // `off`, or the operator's own binary
  try {
    await step('egress relay (local egress data path)', () => ensureEgressRelay());
  } catch (error) {
    say(
      yellow(
        `egress relay not built (${error.message ?? error}): the worker copies long egress ` +
          'connections in Node instead (slower); the next npm start tries again',
      ),
    );
  }
}

const COMMANDS = {
  bootstrap: async () => {
    await bootstrap();
    return 0;
  },
  test: async (args) => {
    // The Terraform provider's Go tests run after Vitest, unless Vitest got a filter or
    // CUBICLE_SKIP_GO_TESTS=1. Only the tests need the Go tools; the first build takes minutes
    // (beside npm ci and the build), later runs none.
    const withGo = args.length === 0 && process.env.CUBICLE_SKIP_GO_TESTS !== '1';
    const realNode = await bootstrap({ alongside: () => buildTestTools() });
    // The Python SDK's tests follow the Go ones (CUBICLE_SKIP_PYTHON_TESTS=1 skips them); their
    // venv is made once per lock file (≈ 10 s), a stat after.
    const withPython = args.length === 0 && process.env.CUBICLE_SKIP_PYTHON_TESTS !== '1';
    if (withPython) await step('Python venv (Python SDK tests)', () => ensurePythonEnv(root));
    // The repository layers of the real-node suite's images, from the build just made (a hash
    // check when nothing changed; ≈ 30 s per image otherwise), beside Vitest like the node tools.
    const beside = {
      'node tools': realNode.nodeTools,
      'Debian layers': realNode.debianLayers,
      ...(args.length === 0 ? { images: startImages(realNode.debianLayers) } : {}),
    };
    const pending = new Set(Object.keys(beside));
    for (const [name, work] of Object.entries(beside)) work.then(() => pending.delete(name));
    await new Promise((resolve) => setImmediate(resolve)); // what is done has said so
    besideVitest([...pending]);
    // OpenTofu only serves the Go tests after Vitest: it is built (≈ 5 min the first time) beside it.
    const tofuBuild = withGo ? buildTofuBeside(root) : null;
    tofuBuild?.catch(() => undefined);
    say(bold('▶ vitest run'));
    let vitest = { passed: 0, failed: 0, skipped: 0 };
    const vitestCode = await runVitest(root, args, { onCounts: (c) => (vitest = c) });
    const vitestLine = `${vitest.passed} passed, ${vitest.failed} failed, ${vitest.skipped} skipped`;
    // Done long before on a fresh machine too; a failure was printed and failed the suite.
    await Promise.all(Object.values(beside));
    if (!withGo && !withPython) {
      printFailures(vitest.failures);
      console.log(vitestLine);
      return vitestCode;
    }
    const parts = [`${vitestLine} (vitest)`];
    let isOk = vitestCode === 0;
    // OpenTofu's build (beside Vitest) failing counts as one Go failure; pytest still runs.
    let tofu = '';
    let tofuFailed = false;
    if (tofuBuild) {
      try {
        tofu = await step('OpenTofu (Terraform provider tests, built beside Vitest)', async () => {
          const { path, lines } = await tofuBuild;
          for (const line of lines) console.log(line);
          return path;
        });
      } catch (error) {
        say(red(error.message));
        tofuFailed = true;
      }
    }
    // The Go and Python suites run side by side, each against its own live Cubicle: both mostly
    // wait on it (≈ 90 s and ≈ 125 s one after the other). pytest has the terminal; the Go
    // lines are printed when both are done.
    const goLines = [];
    const goLog = withPython ? (line) => goLines.push(line) : say;
    const [go, py] = await Promise.all([
      tofuFailed
        ? { passed: 0, failed: 1, skipped: 0, code: 1 }
        : withGo
          ? runGoTests(root, { tofu, log: goLog })
          : null,
      withPython ? runPythonTests(root) : null,
    ]);
    for (const line of goLines) say(line);
    printFailures(vitest.failures);
    if (go) {
      parts.push(`${go.passed} passed, ${go.failed} failed, ${go.skipped} skipped (terraform)`);
      isOk &&= go.code === 0 && go.failed === 0;
    }
    if (py) {
      parts.push(`${py.passed} passed, ${py.failed} failed, ${py.skipped} skipped (python)`);
      isOk &&= py.code === 0 && py.failed === 0;
    }
    console.log(parts.join(' · '));
    return vitestCode !== 0 ? vitestCode : isOk ? 0 : 1;
  },
  // Only the Terraform provider's Go tests (unit + acceptance against a live Cubicle).
  'test-go': async () => {
    await bootstrap();
    const tofu = await step('OpenTofu (Terraform provider tests)', ensureTofu);
    const go = await runGoTests(root, { tofu });
    return go.code === 0 && go.failed === 0 ? 0 : 1;
  },
  // Only the Python SDK's tests (pytest against a live Cubicle); extra args go to pytest.
  'test-python': async (args) => {
    await bootstrap();
    await step('Python venv (Python SDK tests)', () => ensurePythonEnv(root));
    const py = await runPythonTests(root, { args });
    return py.code === 0 && py.failed === 0 ? 0 : 1;
  },
  start: async () => {
    // The egress relay is built beside npm ci and the build (≈ 10 s with go present, ≈ 1 min
    // more where go must be fetched from the module proxy); without it Cubicle still runs, the
    // worker then copies long egress connections in Node (slower), so a failure only warns.
    await bootstrap({ alongside: () => relayForStart() });
    return startCubicle(root);
  },
  migrate: async () => {
    await bootstrap();
    await migrateCommand(root);
    return 0;
  },
};

const [command, ...args] = process.argv.slice(2);
const handler = COMMANDS[command ?? ''];
if (!handler) {
  console.error(`usage: node scripts/cubicle.mjs <${Object.keys(COMMANDS).join('|')}> [args]`);
  process.exit(2);
}
try {
  process.exitCode = await handler(args);
} catch (error) {
  if (error instanceof UserError) say(red(error.message));
  else console.error(error);
  process.exitCode = 1;
}
