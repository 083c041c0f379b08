// Builds the egress relay (main.go beside this file: the local egress point's splice(2) data path,
// see packages/egress/src/point/splice-relay.ts) with the ordinary `go` command into the same
// cache as the kube tools (kube-paths.mjs), once per machine and source version: the directory is
// named after a hash of the source, so an edit of main.go builds anew. Standard library only, so
// the build needs no module download (≈ 10-30 s the first time, a stamp check after). The worker
// runs it through a stable link beside the versioned directories (egressRelayLink).
//   node scripts/tools/egress-relay/tool.mjs     build when missing, then print the path as JSON
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo, goCacheEnv, runGo } from '../../lib/kube-go.mjs';
import { kubeToolsDir } from '../../lib/kube-paths.mjs';
import { withToolLock } from '../../lib/tool-lock.mjs';
import { dropStamp, isStampedTool } from '../../lib/tool-stamp.mjs';
import { dim, formatMs, say, UserError } from '../../lib/ui.mjs';

const SOURCE = fileURLToPath(new URL('.', import.meta.url));

/** The relay's version: a hash of its source files (what the binary reports with --version). */
export function egressRelayVersion() {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'main.go', 'accept.go'])
    hash.update(readFileSync(join(SOURCE, file)));
  return hash.digest('hex').slice(0, 12);
}

/** egressRelayPath names the cached binary for this source (it may not exist yet). */
export function egressRelayPath(env = process.env) {
  return join(kubeToolsDir(env), `egress-relay-${egressRelayVersion()}`, 'egress-relay');
}

/**
 * egressRelayLink is the stable name the worker runs (its default CUBICLE_EGRESS_RELAY): a
 * symlink to the binary of the source built last.
 */
export function egressRelayLink(env = process.env) {
  return join(kubeToolsDir(env), 'egress-relay');
}

/** isEgressRelayReady: the binary exists and reports this source's version (stamped once). */
export function isEgressRelayReady(bin) {
  const version = egressRelayVersion();
  return isStampedTool(bin, {
    version,
    args: ['--version'],
    reports: (out) => out.trim() === `egress-relay ${version}`,
  });
}

/**
 * ensureEgressRelay returns the path of the relay built from this source, building it first when
 * it is missing. Idempotent and safe to run concurrently (a lock file in the tools cache).
 * `link: false` leaves the stable link alone: tests and benches run the versioned binary they
 * were given, and must not repoint a worker of another checkout (another source) at theirs.
 */
export async function ensureEgressRelay({ log = say, link: relink = true } = {}) {
  const bin = egressRelayPath();
  if (!isEgressRelayReady(bin)) {
    const dir = kubeToolsDir();
    mkdirSync(join(bin, '..'), { recursive: true });
    await withToolLock(
      { dir, lockName: 'egress-relay-build.lock', what: 'the egress relay', log },
      async () => {
        if (isEgressRelayReady(bin)) return;
        const output = `${bin}.partial`;
        rmSync(output, { force: true });
        const { go, env, version } = await findGo(dir, { log });
        const label = 'egress relay: go build';
        log(`${label} (go ${version}) …`);
        const ms = await runGo(
          go,
          [
            'build',
            '-trimpath',
            '-ldflags',
            `-s -w -X main.version=${egressRelayVersion()}`,
            '-o',
            output,
            '.',
          ],
          {
            cwd: SOURCE,
            env: { ...goCacheEnv(dir), ...env, CGO_ENABLED: '0' },
            logFile: join(dir, 'egress-relay-build.log'),
            label,
            log,
          },
        );
        log(dim(`${label} done in ${formatMs(ms)}`));
        if (!isEgressRelayReady(output))
          throw new UserError(`${output} was built but does not report its version`);
        dropStamp(output);
        renameSync(output, bin);
        isEgressRelayReady(bin);
      },
    );
  }
  if (relink) relinkEgressRelay();
  const mb = (statSync(bin).size / 1e6).toFixed(1);
  log(dim(`egress relay: ${bin} (${mb} MB)`));
  return bin;
}

/** relinkEgressRelay points the stable link at this source's binary (atomic rename). */
function relinkEgressRelay() {
  const link = egressRelayLink();
  const target = join(`egress-relay-${egressRelayVersion()}`, 'egress-relay');
  let current = null;
  try {
    current = readlinkSync(link);
  } catch {
    // no link yet
  }
  if (current === target) return;
  // A name of this process's own: two checkouts relinking at once must not trip over one file.
  const partial = `${link}.${process.pid}.partial`;
  rmSync(partial, { force: true });
  symlinkSync(target, partial);
  renameSync(partial, link);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    console.log(JSON.stringify({ egressRelay: await ensureEgressRelay() }));
  } catch (error) {
    console.error(error instanceof UserError ? error.message : error);
    process.exitCode = 1;
  }
}
