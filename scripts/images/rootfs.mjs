// The Debian layer of an image: `mmdebstrap --variant=minbase` of bookworm with the packages the
// image's Dockerfile installs and its uid-1000 login user, made as root into a directory (no base
// image, no registry, no container engine). Downloaded .debs are kept in a per-machine cache
// (mmdebstrap's sync-in/sync-out), so a rebuild downloads nothing that did not change.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
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
  { packages, login, epoch, debCache, logFile, hooks = {}, log = say },
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
    `--setup-hook=sync-in ${debCache} /var/cache/apt/archives/`,
    `--customize-hook=sync-out /var/cache/apt/archives ${debCache}`,
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
  const ms = await runLogged('mmdebstrap', args, {
    logFile,
    label: 'mmdebstrap',
    env: { SOURCE_DATE_EPOCH: String(epoch), TMPDIR: join(dir, '..') },
    log,
  });
  log(dim(`rootfs: done in ${formatMs(ms)}`));
  return ms;
}
