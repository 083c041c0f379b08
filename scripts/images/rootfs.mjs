// The Debian layer of an image: `mmdebstrap --variant=minbase` of bookworm with the packages the
// image's Dockerfile installs and its uid-1000 login user, made as root into a directory (no base
// image, no registry, no container engine). Downloaded .debs are kept in a per-machine cache
// (mmdebstrap's sync-in/sync-out), so a rebuild downloads nothing that did not change.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { dim, formatMs, say } from '../lib/ui.mjs';

/** The Debian release and archive the images are made from (override the mirror with CUBICLE_DEBIAN_MIRROR). */
export const DEBIAN = Object.freeze({
  suite: 'bookworm',
  mirror: 'http://deb.debian.org/debian',
  securityMirror: 'http://deb.debian.org/debian-security',
});

/** Left out of every image: documentation, man pages and translations (as the slim images do). */
const PATH_EXCLUDES = [
  '/usr/share/doc/*',
  '/usr/share/man/*',
  '/usr/share/info/*',
  '/usr/share/locale/*',
];

/** q makes `text` one shell word, whatever it holds (a tools dir may have spaces). */
const q = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * debCacheHooks are the mmdebstrap hooks (sh, "$1" the rootfs) that give apt the cached .debs as
 * hard links, and link the ones it downloaded back into the cache (the work dir is in the same
 * store): mmdebstrap's sync-in/sync-out copied the whole cache (611 MB) in and out for every
 * image, 19 of the api layer's 65 s (10.5 s in, 8.9 s out). apt replaces a file by renaming a new
 * one over it, so it never writes into a linked cached .deb.
 */
export function debCacheHooks(debCache) {
  const archives = '"$1"/var/cache/apt/archives';
  return {
    linkIn: `for f in ${q(debCache)}/*.deb; do [ -e "$f" ] || continue; ln "$f" ${archives}/ || exit 1; done`,
    linkOut: `for f in ${archives}/*.deb; do [ -e "$f" ] || continue; [ -e ${q(debCache)}/"\${f##*/}" ] || ln "$f" ${q(debCache)}/ || exit 1; done`,
  };
}

function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * runLogged runs a command with its output appended to `logFile`, saying every 15 s that it is
 * still going (mmdebstrap of the desktop takes about a minute). Rejects with the log's tail.
 */
export function runLogged(command, args, { logFile, label, env, cwd, log = say }) {
  const out = openSync(logFile, 'a');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // nice: the builds share the machine with tests and other work.
    const child = spawn('nice', ['-n', '10', command, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    const beat = setInterval(
      () => log(dim(`  … ${label}: ${formatMs(performance.now() - started)} (log: ${logFile})`)),
      15_000,
    );
    child.once('error', (error) => {
      clearInterval(beat);
      reject(new Error(`could not run ${command}: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearInterval(beat);
      if (code === 0) return resolve(performance.now() - started);
      reject(
        new Error(
          `${label}: ${command} ${signal ? `was killed by ${signal}` : `exited with code ${code}`}; ` +
            `last lines of ${logFile}:\n${tail(logFile)}`,
        ),
      );
    });
  });
}

/**
 * buildRootfs makes `dir` (which must not exist) a Debian root filesystem with `packages` and
 * the login user (uid/gid 1000, `login.name`, home `login.home`, bash), timestamps at `epoch`.
 * `hooks.essential` run (mmdebstrap --essential-hook) before the packages are installed,
 * `hooks.customize` after them (the test datastores' users and entrypoints, datastores.mjs).
 */
export async function buildRootfs(
  dir,
  { packages, login, epoch, debCache, logFile, hooks = {}, log = say, retryDelayMs = 15_000 },
) {
  mkdirSync(debCache, { recursive: true });
  const mirror = process.env.CUBICLE_DEBIAN_MIRROR || DEBIAN.mirror;
  const sources = [
    `deb ${mirror} ${DEBIAN.suite} main`,
    `deb ${mirror} ${DEBIAN.suite}-updates main`,
    `deb ${DEBIAN.securityMirror} ${DEBIAN.suite}-security main`,
  ];
  const args = [
    '--variant=minbase',
    '--mode=root',
    '--format=directory',
    `--include=${[...new Set(packages)].join(',')}`,
    '--aptopt=Acquire::Languages "none"',
    ...PATH_EXCLUDES.map((p) => `--dpkgopt=path-exclude=${p}`),
    // Keep the copyright files: the images redistribute these packages.
    '--dpkgopt=path-include=/usr/share/doc/*/copyright',
    '--skip=download/empty',
    `--setup-hook=mkdir -p "$1"/var/cache/apt/archives`,
    `--setup-hook=${debCacheHooks(debCache).linkIn}`,
    `--customize-hook=${debCacheHooks(debCache).linkOut}`,
    // uid/gid 1000 as in node:20-bookworm-slim (`node`), renamed where the Dockerfile renames it.
    `--customize-hook=chroot "$1" groupadd --gid 1000 ${login.name}`,
    `--customize-hook=chroot "$1" useradd --uid 1000 --gid 1000 --create-home --home-dir ${login.home} --shell /bin/bash ${login.name}`,
    ...(hooks.essential ?? []).map((hook) => `--essential-hook=${hook}`),
    ...(hooks.customize ?? []).map((hook) => `--customize-hook=${hook}`),
    // Nothing that differs from run to run or is only useful to apt.
    '--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/etc/machine-id "$1"/var/cache/ldconfig/aux-cache',
    DEBIAN.suite,
    dir,
    ...sources,
  ];
  log(dim(`rootfs: mmdebstrap ${DEBIAN.suite} minbase + ${packages.length} packages → ${dir}`));
  for (let attempt = 1; ; attempt++) {
    try {
      const ms = await runLogged('mmdebstrap', args, {
        logFile,
        label: 'mmdebstrap',
        env: { SOURCE_DATE_EPOCH: String(epoch), TMPDIR: join(dir, '..') },
        log,
      });
      log(dim(`rootfs: done in ${formatMs(ms)}`));
      return ms;
    } catch (error) {
      if (attempt >= MIRROR_ATTEMPTS || !MIRROR_FAILURE.test(error.message)) throw error;
      const waitMs = retryDelayMs * attempt;
      log(
        dim(`rootfs: the Debian mirror failed (attempt ${attempt}); again in ${formatMs(waitMs)}`),
      );
      removePartialRootfs(dir);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * A mirror (or a proxy in front of it) answering garbage for a moment fails a whole image build
 * on a fresh machine: a fresh clone's bootstrap once met `InRelease: Clearsigned file isn't
 * valid, got 'NOSPLIT'` from deb.debian.org for a few minutes. Such failures are tried again;
 * a wrong package name or a failing hook is not.
 */
const MIRROR_ATTEMPTS = 3;
const MIRROR_FAILURE =
  /Clearsigned file isn't valid|Failed to fetch|Temporary failure resolving|Could not connect|Connection failed|Hash Sum mismatch|Undetermined Error|Unable to fetch some archives|The repository .* is not signed|Release file .* is not valid yet/;

/**
 * removePartialRootfs deletes what a failed mmdebstrap left in `dir`, unless something is still
 * mounted under it (mmdebstrap unmounts /proc, /sys and /dev on the way out; if it did not, a
 * recursive delete would walk into the host's): then it throws instead.
 */
function removePartialRootfs(dir) {
  const mounted = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) =>
      line.split(' ')[4]?.replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))),
    )
    .filter((point) => point && (point === dir || point.startsWith(`${dir}/`)));
  if (mounted.length > 0)
    throw new Error(`mmdebstrap left mounts under ${dir} (${mounted.join(', ')}): not retrying`);
  rmSync(dir, { recursive: true, force: true });
}
