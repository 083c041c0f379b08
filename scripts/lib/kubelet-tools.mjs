// Builds the node side of the real-node test cluster (test/harness/kube/real-node): kubelet,
// kube-scheduler and kube-controller-manager from k8s.io/kubernetes at the kube-apiserver's
// version, with the ordinary `go` command, into the same cache as the other Go tools
// (kube-paths.mjs). One tool module holds all three, so the shared packages compile once.
// Measured on 2 cores (cold Go cache): kubelet ≈ 5.3 min, then the scheduler ≈ 5 s and the
// controller-manager ≈ 1.6 min; with kube-apiserver's build cache already warm, less.
//   node scripts/lib/kubelet-tools.mjs     build when missing, then print the paths as JSON
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from './kube-go.mjs';
import { KUBE_TOOL_VERSIONS, kubeToolsDir } from './kube-paths.mjs';
import { stagingReplaces } from './kube-tools.mjs';
import { capture } from './run.mjs';
import { waitForToolLock, withToolLock } from './tool-lock.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

/** The node binaries, all at the API server's version (kubelet may not be newer than it). */
// kube-proxy (iptables mode) routes the chart's Services on the real node.
export const NODE_TOOLS = Object.freeze([
  'kubelet',
  'kube-scheduler',
  'kube-controller-manager',
  'kube-proxy',
]);

/** nodeToolPaths names the cached binaries (they may not exist yet). */
export function nodeToolPaths(env = process.env) {
  const version = KUBE_TOOL_VERSIONS.kubeApiserver;
  const dir = kubeToolsDir(env);
  return Object.fromEntries(
    NODE_TOOLS.map((tool) => [tool, join(dir, `${tool}-${version}`, tool)]),
  );
}

/** isNodeToolReady: the binary exists, runs, and reports the pinned (stamped) version. */
export function isNodeToolReady(bin) {
  if (!existsSync(bin)) return false;
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return (
    result.status === 0 &&
    `${result.stdout}${result.stderr}`.includes(`Kubernetes ${KUBE_TOOL_VERSIONS.kubeApiserver}`)
  );
}

async function buildNodeTools(dir, todo, log) {
  const version = KUBE_TOOL_VERSIONS.kubeApiserver;
  const { go, env, version: goVersion } = await findGo(dir, { log });
  log(dim(`node tools: building ${todo.join(', ')} with go ${goVersion} (${go}) into ${dir}`));
  const goEnv = { ...goCacheEnv(dir), ...env };
  const logFile = join(dir, 'kubelet-build.log');
  const src = join(dir, 'src', `kube-node-${version}`);
  mkdirSync(src, { recursive: true });
  const download = await capture(go, ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], {
    cwd: dir,
    env: { ...process.env, ...goEnv },
  });
  const goModPath = download.code === 0 ? JSON.parse(download.stdout).GoMod : undefined;
  if (!goModPath)
    throw new UserError(`could not download k8s.io/kubernetes@${version} (go mod download failed)`);
  const replaces = stagingReplaces(readFileSync(goModPath, 'utf8'), version);
  writeFileSync(
    join(src, 'go.mod'),
    `module local/cubicle-kube-node\n\ngo 1.26.0\n\n${replaces.join('\n')}\n`,
  );
  rmSync(join(src, 'go.sum'), { force: true });
  const step = async (args, label) => {
    log(`${label} …`);
    const ms = await runGo(go, args, { cwd: src, env: goEnv, logFile, label, log });
    log(`${label} done in ${formatMs(ms)}`);
  };
  const pkgs = NODE_TOOLS.map((tool) => `k8s.io/kubernetes/cmd/${tool}@${version}`);
  await step(['get', '-tool', ...pkgs], 'node tools: module download');
  const minor = version.split('.')[1];
  const ldflags = [
    '-s -w',
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    '-X k8s.io/component-base/version.gitMajor=1',
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
  const paths = nodeToolPaths();
  for (const tool of todo) {
    const output = `${paths[tool]}.partial`;
    mkdirSync(join(output, '..'), { recursive: true });
    rmSync(output, { force: true });
    // CGO off: a static binary, as upstream's release builds of these three are.
    await step(
      ['build', '-trimpath', '-ldflags', ldflags, '-o', output, `k8s.io/kubernetes/cmd/${tool}`],
      `${tool}: go build`,
    );
    if (!isNodeToolReady(output))
      throw new UserError(`${output} was built but does not report Kubernetes ${version}`);
    renameSync(output, paths[tool]);
  }
}

/** One lock for the three builds (they share one module and its build cache). */
const LOCK_NAME = 'kubelet-build.lock';

/**
 * waitForNodeTools waits for a build of the node tools in progress (`npm test` builds them beside
 * Vitest: only the real-node suite runs them) and never builds them itself.
 */
export function waitForNodeTools({ log = say } = {}) {
  return waitForToolLock({ dir: kubeToolsDir(), lockName: LOCK_NAME, what: 'kubelet', log });
}

/**
 * ensureNodeTools returns the paths of kubelet, kube-scheduler and kube-controller-manager,
 * building whichever is missing first (under `nice`, one lock for all three). Idempotent and safe
 * to run concurrently.
 */
export async function ensureNodeTools({ log = say } = {}) {
  const paths = nodeToolPaths();
  const missing = () => NODE_TOOLS.filter((tool) => !isNodeToolReady(paths[tool]));
  if (missing().length > 0) {
    const dir = kubeToolsDir();
    mkdirSync(dir, { recursive: true });
    await withToolLock({ dir, lockName: LOCK_NAME, what: 'kubelet', log }, async () => {
      const todo = missing();
      if (todo.length === 0) return;
      const started = performance.now();
      await buildNodeTools(dir, todo, log);
      log(`node tools: one-time build took ${formatMs(performance.now() - started)}`);
    });
  }
  for (const tool of NODE_TOOLS) {
    const mb = (statSync(paths[tool]).size / 1e6).toFixed(0);
    log(dim(`${tool} ${KUBE_TOOL_VERSIONS.kubeApiserver}: ${paths[tool]} (${mb} MB)`));
  }
  return paths;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify(await ensureNodeTools(), null, 2));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
