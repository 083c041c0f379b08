// Builds versitygw, the S3-compatible server the object store's tests run against (its posix back
// end keeps each object as a plain file under a private directory, so a test can grep what the
// server stored), from its Go module with the ordinary `go` command, into the same cache as the
// kube tools (kube-paths.mjs). versitygw's module has no local replaces, so a plain `go install`
// works. The first build takes a few minutes (module download + compile); later runs trust a
// stamp beside the verified binary and return.
//   node scripts/lib/s3-tools.mjs     build when missing, then print the path as JSON
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from './kube-go.mjs';
import { kubeToolsDir } from './kube-paths.mjs';
import { withToolLock } from './tool-lock.mjs';
import { dropStamp, isStampedTool } from './tool-stamp.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

/** The pinned versitygw release (the only one the module proxy lists today). */
export const VERSITYGW_VERSION = 'v1.8.0';

/** versitygwPath names the cached binary for the pinned version (it may not exist yet). */
export function versitygwPath(env = process.env) {
  return join(kubeToolsDir(env), `versitygw-${VERSITYGW_VERSION}`, 'versitygw');
}

/**
 * isVersitygwReady: the binary exists and reports the pinned version (a stamped build). A binary
 * verified before (same size and mtime as its stamp) is trusted without running it.
 */
export function isVersitygwReady(bin) {
  return isStampedTool(bin, {
    version: VERSITYGW_VERSION,
    args: ['--version'],
    reports: (out) => new RegExp(`^Version\\s*:\\s*${VERSITYGW_VERSION}$`, 'm').test(out),
  });
}

async function buildVersitygw(dir, log, output) {
  const { go, env, version } = await findGo(dir, { log });
  log(dim(`versitygw: building ${VERSITYGW_VERSION} with go ${version} (${go}) into ${dir}`));
  const gobin = join(dir, 'src', `versitygw-${VERSITYGW_VERSION}-bin`);
  rmSync(gobin, { recursive: true, force: true });
  mkdirSync(gobin, { recursive: true });
  const goEnv = { ...goCacheEnv(dir), ...env, GOBIN: gobin };
  const logFile = join(dir, 'versitygw-build.log');
  const label = 'versitygw: go install';
  log(`${label} …`);
  // Without the stamp the binary reports version "git" and isVersitygwReady cannot tell builds apart.
  const ms = await runGo(
    go,
    [
      'install',
      '-trimpath',
      '-ldflags',
      `-s -w -X main.Version=${VERSITYGW_VERSION}`,
      `github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}`,
    ],
    { cwd: dir, env: goEnv, logFile, label, log },
  );
  log(`${label} done in ${formatMs(ms)}`);
  renameSync(join(gobin, 'versitygw'), output);
  rmSync(gobin, { recursive: true, force: true });
  return ms;
}

/**
 * ensureVersitygw returns the path of the pinned versitygw binary, building it first when it is
 * missing or does not run. Idempotent and safe to run concurrently (a lock file in the tools cache).
 */
export async function ensureVersitygw({ log = say } = {}) {
  const bin = versitygwPath();
  if (!isVersitygwReady(bin)) {
    const dir = kubeToolsDir();
    mkdirSync(join(bin, '..'), { recursive: true });
    await withToolLock(
      { dir, lockName: 'versitygw-build.lock', what: 'versitygw', log },
      async () => {
        if (isVersitygwReady(bin)) return;
        const output = `${bin}.partial`;
        rmSync(output, { force: true });
        await buildVersitygw(dir, log, output);
        if (!isVersitygwReady(output)) {
          throw new UserError(
            `${output} was built but does not report versitygw ${VERSITYGW_VERSION}`,
          );
        }
        dropStamp(output);
        renameSync(output, bin);
        isVersitygwReady(bin);
      },
    );
  }
  const mb = (statSync(bin).size / 1e6).toFixed(0);
  log(dim(`versitygw ${VERSITYGW_VERSION}: ${bin} (${mb} MB)`));
  return bin;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify({ versitygw: await ensureVersitygw() }));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
