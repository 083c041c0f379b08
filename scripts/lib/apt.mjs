// Debian packages Cubicle needs on the host, installed only when missing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { capture, run } from './run.mjs';
import { say, UserError } from './ui.mjs';

/** DESKTOP_PACKAGES: what a desktop needs, from the one list the desktop image also installs. */
export const DESKTOP_PACKAGES = JSON.parse(
  readFileSync(
    new URL('../../packages/driver-guest/desktop-packages.json', import.meta.url),
    'utf8',
  ),
).packages;

/**
 * APT_PACKAGES lists the Debian packages `npm start` and `npm test` need, grouped by purpose.
 * Add a group (e.g. the desktop: xvfb, fluxbox, x11vnc; the browser: chromium) rather than
 * installing anything from elsewhere.
 */
export const APT_PACKAGES = {
  // Private PostgreSQL and Redis: the embedded default of `npm start` and the test harness
  // (@cubicle/embedded runs Debian's binaries itself; a system service is neither needed nor used).
  dataServices: ['postgresql', 'redis-server'],
  // Local desktop sessions (packages/driver-guest startDesktop, the local backend and every
  // desktop test). One list, shared with the default sandbox image (images/desktop/Dockerfile).
  // It includes FFmpeg: x11grab + libx264 encode a recorded claim's screen beside its desktop
  // (packages/driver-guest/src/video), and the recording tests decode with ffprobe; and
  // libnss3-tools, whose certutil makes the browsers trust the egress CA (credentials injected at
  // egress), so the desktop image has it too.
  desktop: DESKTOP_PACKAGES,
  // The local backend runs every desktop in a bubblewrap sandbox (user, mount, PID, IPC and
  // network namespaces; packages/driver-guest/src/desktop/start-sandbox.ts). setpriv, which
  // gives each sandbox its own host uid when the worker is root, is in util-linux.
  sandbox: ['bubblewrap'],
  // Sandbox egress (packages/egress/src/point): the host's cubicle_egress nftables table filters
  // and redirects every sandbox link. Debian's nftables.service is left disabled and loads
  // nothing; `nft` is only a command here. (iproute2's `ip` makes the links.)
  egress: ['nftables', 'iproute2'],
  // A C compiler for packages/unix-peer's Node-API addon (SO_PEERCRED and bind-without-listen,
  // which Node lacks): the control plane checks who serves a sandbox socket before using it.
  native: ['gcc', 'libc6-dev'],
  // Headless Chromium for the web e2e suites and `npm run bench:viewer` (driven by playwright-core
  // with executablePath /usr/bin/chromium; never a browser download).
  browser: ['chromium'],
  // The Python SDK's tests (clients/python) run in a venv made by scripts/lib/python-env.mjs;
  // Debian's python3 has no venv module (nor the pip wheel venv bootstraps) without python3-venv.
  python: ['python3', 'python3-venv'],
  // The real-node Kubernetes suite (test/e2e/real-node, test/harness/kube/real-node): containerd
  // with runc and the CNI plugins, started privately by the harness (never the system service:
  // policy-rc.d keeps it stopped; there is no systemd here), mmdebstrap for the registry-free
  // images (scripts/images/build.mjs) and openssl for the node's certificates.
  realNode: ['containerd', 'runc', 'containernetworking-plugins', 'mmdebstrap', 'openssl'],
};

// Quicker and more telling than dpkg for packages whose binary we look for anyway. The
// `postgresql` metapackage may be absent while a postgresql-N package provides the server.
const BINARY_CHECKS = {
  postgresql: () =>
    existsSync('/usr/lib/postgresql') &&
    readdirSync('/usr/lib/postgresql').some((v) =>
      existsSync(`/usr/lib/postgresql/${v}/bin/postgres`),
    ),
  'redis-server': () => existsSync('/usr/bin/redis-server'),
};

async function installedByDpkg(names) {
  const { stdout } = await capture('dpkg-query', [
    '-W',
    '-f=${Package} ${db:Status-Abbrev}\n',
    ...names,
  ]);
  const installed = new Set();
  for (const line of stdout.split('\n')) {
    const [name, status] = line.trim().split(/\s+/);
    if (name && status === 'ii') installed.add(name);
  }
  return installed;
}

/** usedBytes is the space used on the root filesystem (null when df cannot say). */
async function usedBytes() {
  const { code, stdout } = await capture('df', ['-B1', '--output=used', '/']);
  const n = Number(stdout.trim().split('\n').pop());
  return code === 0 && Number.isFinite(n) ? n : null;
}

/** missingAptPackages returns the packages of APT_PACKAGES that are not installed. */
export async function missingAptPackages() {
  const wanted = Object.values(APT_PACKAGES).flat();
  const unchecked = wanted.filter((name) => !BINARY_CHECKS[name]?.());
  if (unchecked.length === 0) return [];
  const installed = await installedByDpkg(unchecked);
  return unchecked.filter((name) => !installed.has(name));
}

/**
 * ensureAptPackages installs whatever APT_PACKAGES lacks with one `apt-get update` and one
 * `apt-get install -y --no-install-recommends`, through sudo unless we are root.
 */
export async function ensureAptPackages() {
  const missing = await missingAptPackages();
  if (missing.length === 0) {
    say(`all present: ${Object.values(APT_PACKAGES).flat().join(', ')}`);
    return;
  }
  const hasApt = (await capture('sh', ['-c', 'command -v apt-get'])).code === 0;
  if (!hasApt) {
    throw new UserError(
      `apt-get is not available (Cubicle bootstraps on Debian or Ubuntu). Install these ` +
        `packages, or their equivalents, yourself: ${missing.join(', ')}`,
    );
  }
  const isRoot = process.getuid?.() === 0;
  if (!isRoot && (await capture('sh', ['-c', 'command -v sudo'])).code !== 0) {
    throw new UserError(
      `installing ${missing.join(', ')} needs root and sudo is not available; run ` +
        `\`apt-get install -y ${missing.join(' ')}\` as root`,
    );
  }
  const apt = (args) =>
    isRoot
      ? run('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
      : run('sudo', ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args]);
  say(`installing with apt-get: ${missing.join(', ')}`);
  const diskBefore = await usedBytes();
  const startedAt = Date.now();
  await apt(['update']);
  await apt(['install', '-y', '--no-install-recommends', ...missing]);
  // The desktop apps (browsers, LibreOffice) are most of it: ~46 s and ~810 MB measured.
  const diskAfter = await usedBytes();
  say(
    `installed ${missing.length} package(s) in ${((Date.now() - startedAt) / 1000).toFixed(1)} s` +
      (diskBefore !== null && diskAfter !== null
        ? `, ${Math.round((diskAfter - diskBefore) / 1e6)} MB of disk`
        : ''),
  );
  const stillMissing = await missingAptPackages();
  if (stillMissing.length > 0) {
    throw new UserError(`apt-get finished but these are still missing: ${stillMissing.join(', ')}`);
  }
}
