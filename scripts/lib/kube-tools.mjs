// Builds the real Kubernetes control plane the tests run against (etcd and kube-apiserver) from
// their Go modules with the ordinary `go` command, into a cache outside the repo (kube-paths.mjs).
// Release downloads are not reachable here; the Go module proxy is. The first build takes
// minutes (kube-apiserver is large); later runs find the binaries and return at once.
//   node scripts/lib/kube-tools.mjs     build when missing, then print the paths as JSON
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
import { KUBE_TOOL_VERSIONS, kubeToolPaths } from './kube-paths.mjs';
import { capture } from './run.mjs';
import { withToolLock } from './tool-lock.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

/** versionOutput runs `<bin> --version` and returns its output, or undefined when it does not run. */
function versionOutput(bin) {
  if (!existsSync(bin)) return undefined;
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 });
  return result.status === 0 ? `${result.stdout}${result.stderr}` : undefined;
}

/** The line each binary prints for `--version`, to tell a good build from a broken or unstamped one. */
const EXPECTED_VERSION = {
  etcd: `etcd Version: ${KUBE_TOOL_VERSIONS.etcd.slice(1)}`,
  kubeApiserver: `Kubernetes ${KUBE_TOOL_VERSIONS.kubeApiserver}`,
};

/** isToolReady: the binary exists, runs, and reports the pinned version. */
export function isToolReady(tool, bin) {
  return versionOutput(bin)?.includes(EXPECTED_VERSION[tool]) ?? false;
}

/** stagingReplaces lists `module => module version` lines for k8s.io/kubernetes' local staging repos. */
export function stagingReplaces(kubernetesGoMod, kubeVersion) {
  const stagingVersion = kubeVersion.replace(/^v1\./, 'v0.');
  const modules = [
    ...kubernetesGoMod.matchAll(/^\s*(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\//gm),
  ].map((m) => m[1]);
  if (modules.length === 0)
    throw new UserError('k8s.io/kubernetes go.mod lists no staging replaces');
  return modules.map((module) => `replace ${module} => ${module} ${stagingVersion}`);
}

async function buildKubeApiserver(ctx, output) {
  const version = KUBE_TOOL_VERSIONS.kubeApiserver;
  const src = join(ctx.dir, 'src', `kube-apiserver-${version}`);
  mkdirSync(src, { recursive: true });
  // k8s.io/kubernetes replaces its staging repos with local paths, which `go install` refuses;
  // a module of ours pins each one to its published v0.N.P release instead.
  const download = await capture(
    ctx.go,
    ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`],
    {
      cwd: ctx.dir,
      env: ctx.env,
    },
  );
  const goModPath = download.code === 0 ? JSON.parse(download.stdout).GoMod : undefined;
  if (!goModPath)
    throw new UserError(`could not download k8s.io/kubernetes@${version} (go mod download failed)`);
  const replaces = stagingReplaces(readFileSync(goModPath, 'utf8'), version);
  writeFileSync(
    join(src, 'go.mod'),
    `module local/cubicle-kube-apiserver\n\ngo 1.26.0\n\n${replaces.join('\n')}\n`,
  );
  rmSync(join(src, 'go.sum'), { force: true });
  const pkg = 'k8s.io/kubernetes/cmd/kube-apiserver';
  await ctx.go_(['get', '-tool', `${pkg}@${version}`], src, 'kube-apiserver: module download');
  const minor = version.split('.')[1];
  // Without the stamp the binary says v0.0.0-master and version-skew checks misfire.
  const ldflags = [
    '-s -w',
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    '-X k8s.io/component-base/version.gitMajor=1',
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
  await ctx.go_(
    ['build', '-trimpath', '-ldflags', ldflags, '-o', output, pkg],
    src,
    'kube-apiserver: go build',
  );
}

async function buildEtcd(ctx, output) {
  const version = KUBE_TOOL_VERSIONS.etcd;
  const src = join(ctx.dir, 'src', `etcd-${version}`);
  mkdirSync(src, { recursive: true });
  // etcd's server module is its main package, with local replaces of its own: a module of ours
  // requires the published one.
  writeFileSync(join(src, 'go.mod'), 'module local/cubicle-etcd\n\ngo 1.24\n');
  rmSync(join(src, 'go.sum'), { force: true });
  const pkg = 'go.etcd.io/etcd/server/v3';
  await ctx.go_(['get', '-tool', `${pkg}@${version}`], src, 'etcd: module download');
  await ctx.go_(
    ['build', '-trimpath', '-ldflags', '-s -w', '-o', output, pkg],
    src,
    'etcd: go build',
  );
}

const BUILDERS = { etcd: buildEtcd, kubeApiserver: buildKubeApiserver };

/**
 * ensureKubeTools returns the paths of etcd and kube-apiserver at the pinned versions, building
 * whichever is missing (or does not run) first. Idempotent and safe to run concurrently.
 */
export async function ensureKubeTools({ log = say } = {}) {
  const paths = kubeToolPaths();
  const tools = /** @type {const} */ (['etcd', 'kubeApiserver']);
  const missing = () => tools.filter((tool) => !isToolReady(tool, paths[tool]));
  if (missing().length > 0) {
    mkdirSync(paths.dir, { recursive: true });
    await withToolLock(
      { dir: paths.dir, lockName: 'build.lock', what: 'the kube tools', log },
      async () => {
        const todo = missing();
        if (todo.length === 0) return;
        const { go, env, version } = await findGo(paths.dir, { log });
        log(
          dim(
            `kube tools: building ${todo.join(', ')} with go ${version} (${go}) into ${paths.dir}`,
          ),
        );
        const logFile = join(paths.dir, 'build.log');
        const goEnv = { ...goCacheEnv(paths.dir), ...env };
        const ctx = {
          dir: paths.dir,
          go,
          env: { ...process.env, ...goEnv },
          go_: async (args, cwd, label) => {
            log(`${label} …`);
            const ms = await runGo(go, args, { cwd, env: goEnv, logFile, label, log });
            log(dim(`${label} done in ${formatMs(ms)}`));
          },
        };
        for (const tool of todo) {
          const output = `${paths[tool]}.partial`;
          mkdirSync(join(output, '..'), { recursive: true });
          rmSync(output, { force: true });
          await BUILDERS[tool](ctx, output);
          if (!isToolReady(tool, output)) {
            throw new UserError(
              `${output} was built but does not report "${EXPECTED_VERSION[tool]}" for --version`,
            );
          }
          renameSync(output, paths[tool]);
        }
      },
    );
  }
  for (const tool of tools) {
    const mb = (statSync(paths[tool]).size / 1e6).toFixed(0);
    log(dim(`${EXPECTED_VERSION[tool]}: ${paths[tool]} (${mb} MB)`));
  }
  return paths;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify(await ensureKubeTools(), null, 2));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
