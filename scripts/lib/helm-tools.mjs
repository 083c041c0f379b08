// Builds helm, the CLI the chart tests render helm/cubicle with (test/integration/helm-chart.test.ts),
// from its Go module with the ordinary `go` command, into the same cache as the kube tools
// (kube-paths.mjs). helm's module has no local replaces, so a plain `go install` works.
// The first build takes ≈ 2 min (module download + compile); later runs check the binary's
// `version` output (≈ 0.1 s) and return.
//   node scripts/lib/helm-tools.mjs     build when missing, then print the path as JSON
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from './kube-go.mjs';
import { kubeToolsDir } from './kube-paths.mjs';
import { withToolLock } from './tool-lock.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

/** The pinned helm release (the chart's tests and README were written against it). */
export const HELM_VERSION = 'v3.22.0';

/** helmPath names the cached binary for the pinned version (it may not exist yet). */
export function helmPath(env = process.env) {
  return join(kubeToolsDir(env), `helm-${HELM_VERSION}`, 'helm');
}

/** isHelmReady: the binary exists, runs, and reports the pinned version (a stamped build). */
export function isHelmReady(bin) {
  if (!existsSync(bin)) return false;
  const result = spawnSync(bin, ['version', '--template', '{{.Version}}'], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, HELM_CONFIG_HOME: '/nonexistent', HELM_CACHE_HOME: '/nonexistent' },
  });
  return result.status === 0 && result.stdout.trim() === HELM_VERSION;
}

async function buildHelm(dir, log, output) {
  const { go, env, version } = await findGo(dir, { log });
  log(dim(`helm: building helm ${HELM_VERSION} with go ${version} (${go}) into ${dir}`));
  const gobin = join(dir, 'src', `helm-${HELM_VERSION}-bin`);
  rmSync(gobin, { recursive: true, force: true });
  mkdirSync(gobin, { recursive: true });
  const goEnv = { ...goCacheEnv(dir), ...env, GOBIN: gobin };
  const logFile = join(dir, 'helm-build.log');
  const label = 'helm: go install';
  log(`${label} …`);
  // Without the stamp helm reports itself as a dev build and refuses charts with a kubeVersion.
  const ms = await runGo(
    go,
    [
      'install',
      '-trimpath',
      '-ldflags',
      `-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
      `helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`,
    ],
    { cwd: dir, env: goEnv, logFile, label, log },
  );
  log(dim(`${label} done in ${formatMs(ms)}`));
  renameSync(join(gobin, 'helm'), output);
  rmSync(gobin, { recursive: true, force: true });
}

/**
 * ensureHelm returns the path of the pinned helm binary, building it first when it is missing or
 * does not run. Idempotent and safe to run concurrently (a lock file in the tools cache).
 */
export async function ensureHelm({ log = say } = {}) {
  const bin = helmPath();
  if (!isHelmReady(bin)) {
    const dir = kubeToolsDir();
    mkdirSync(join(bin, '..'), { recursive: true });
    await withToolLock({ dir, lockName: 'helm-build.lock', what: 'helm', log }, async () => {
      if (isHelmReady(bin)) return;
      const output = `${bin}.partial`;
      rmSync(output, { force: true });
      await buildHelm(dir, log, output);
      if (!isHelmReady(output)) {
        throw new UserError(`${output} was built but does not report helm ${HELM_VERSION}`);
      }
      renameSync(output, bin);
    });
  }
  const mb = (statSync(bin).size / 1e6).toFixed(0);
  log(dim(`helm ${HELM_VERSION}: ${bin} (${mb} MB)`));
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify({ helm: await ensureHelm() }));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
