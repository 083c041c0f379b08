// Builds OpenTofu, the CLI the Terraform provider's acceptance tests run (infra/terraform), from its
// Go module with the ordinary `go` command, into the same cache as the kube tools (kube-paths.mjs).
// Terraform itself cannot be built from the proxy (local replaces); OpenTofu can, through a module
// of ours that replaces hashicorp/hcl/v2 with OpenTofu's fork exactly as tofu's own go.mod does.
// The first build takes minutes (module download + ≈ 200 s compile); later runs check the
// binary's `version` output (≈ 0.1 s) and return.
//   node scripts/lib/tofu-tools.mjs     build when missing, then print the path as JSON
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from './kube-go.mjs';
import { kubeToolsDir } from './kube-paths.mjs';
import { capture } from './run.mjs';
import { withToolLock } from './tool-lock.mjs';
import { dropStamp, isStampedTool } from './tool-stamp.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

/** The pinned OpenTofu release (the acceptance tests were written against it). */
export const TOFU_VERSION = 'v1.12.6';

/** tofuPath names the cached binary for the pinned version (it may not exist yet). */
export function tofuPath(env = process.env) {
  return join(kubeToolsDir(env), `tofu-${TOFU_VERSION}`, 'tofu');
}

/**
 * isTofuReady: the binary exists and reports the pinned version (not a dev build). A binary
 * verified before (same size and mtime as its stamp) is trusted without running it (≈ 1 ms;
 * `tofu version` itself costs ≈ 0.3 s on a busy machine).
 */
export function isTofuReady(bin) {
  return isStampedTool(bin, {
    version: TOFU_VERSION,
    args: ['version'],
    reports: (out) => out.startsWith(`OpenTofu ${TOFU_VERSION}\n`),
    env: { ...process.env, CHECKPOINT_DISABLE: '1', TF_CLI_CONFIG_FILE: '/dev/null' },
  });
}

/** hclReplace reads tofu's go.mod and returns the `replace` line it uses for hashicorp/hcl/v2. */
export function hclReplace(tofuGoMod) {
  const match =
    /^\s*(?:replace\s+)?github\.com\/hashicorp\/hcl\/v2(?:\s+v\S+)?\s+=>\s+(\S+)\s+(v\S+)/m.exec(
      tofuGoMod,
    );
  if (!match) throw new UserError('opentofu go.mod has no replace for github.com/hashicorp/hcl/v2');
  return `replace github.com/hashicorp/hcl/v2 => ${match[1]} ${match[2]}`;
}

async function buildTofu(dir, log, output) {
  const { go, env, version } = await findGo(dir, { log });
  log(dim(`tofu: building OpenTofu ${TOFU_VERSION} with go ${version} (${go}) into ${dir}`));
  const goEnv = { ...goCacheEnv(dir), ...env };
  const logFile = join(dir, 'tofu-build.log');
  const src = join(dir, 'src', `tofu-${TOFU_VERSION}`);
  mkdirSync(src, { recursive: true });
  const download = await capture(
    go,
    ['mod', 'download', '-json', `github.com/opentofu/opentofu@${TOFU_VERSION}`],
    { cwd: src, env: { ...process.env, ...goEnv } },
  );
  const goModPath = download.code === 0 ? JSON.parse(download.stdout).GoMod : undefined;
  if (!goModPath) {
    throw new UserError(
      `could not download github.com/opentofu/opentofu@${TOFU_VERSION} (go mod download failed)`,
    );
  }
  // `go install …/cmd/tofu@v` refuses a module with replaces; ours carries the one tofu needs.
  writeFileSync(
    join(src, 'go.mod'),
    `module local/cubicle-tofu\n\ngo 1.26.0\n\n${hclReplace(readFileSync(goModPath, 'utf8'))}\n`,
  );
  rmSync(join(src, 'go.sum'), { force: true });
  const goStep = async (args, label) => {
    log(`${label} …`);
    const ms = await runGo(go, args, { cwd: src, env: goEnv, logFile, label, log });
    log(dim(`${label} done in ${formatMs(ms)}`));
  };
  const pkg = 'github.com/opentofu/opentofu/cmd/tofu';
  await goStep(['get', '-tool', `${pkg}@${TOFU_VERSION}`], 'tofu: module download');
  // version.dev=no: without it tofu calls itself a development build ("v1.12.6-dev").
  await goStep(
    [
      'build',
      '-trimpath',
      '-ldflags',
      '-s -w -X github.com/opentofu/opentofu/version.dev=no',
      '-o',
      output,
      pkg,
    ],
    'tofu: go build',
  );
}

/**
 * ensureTofu returns the path of the pinned OpenTofu binary, building it first when it is missing
 * or does not run. Idempotent and safe to run concurrently (a lock file in the tools cache).
 */
export async function ensureTofu({ log = say } = {}) {
  const bin = tofuPath();
  if (!isTofuReady(bin)) {
    const dir = kubeToolsDir();
    mkdirSync(join(bin, '..'), { recursive: true });
    await withToolLock({ dir, lockName: 'tofu-build.lock', what: 'tofu', log }, async () => {
      if (isTofuReady(bin)) return;
      const output = `${bin}.partial`;
      rmSync(output, { force: true });
      await buildTofu(dir, log, output);
      if (!isTofuReady(output)) {
        throw new UserError(`${output} was built but does not report OpenTofu ${TOFU_VERSION}`);
      }
      dropStamp(output);
      renameSync(output, bin);
    });
  }
  const mb = (statSync(bin).size / 1e6).toFixed(0);
  log(dim(`OpenTofu ${TOFU_VERSION}: ${bin} (${mb} MB)`));
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify({ tofu: await ensureTofu() }));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
