// The real-node suite's own tools and images, built beside the rest of `npm test`.
// Only test/e2e/real-node runs them (kubelet, kube-scheduler, kube-controller-manager, kube-proxy,
// and the images below), yet on a fresh machine they were the longest part of the bootstrap:
// run 15 (a fresh 2-core machine, 2026-12-07) spent 1,695 s on the Debian layers, 235 s on the
// node tools and 100 s on the repository layers before Vitest could start, 34 min in all against
// a 45-min budget for the whole of `npm test`. So they start early and go on beside Vitest: the
// e2e group comes last, and the suite waits for their locks (test/harness/kube/real-node) rather
// than failing or building them inside a test. Nothing here downloads while the tests run their
// fake internet: its routes hold only documentation ranges the machine does not use
// (test/support/fake-internet, checked by test/integration/fake-internet-routes.test.ts).
// Measured in a fresh clone (run 16): Vitest started at 23.5 min instead of 34.3, but the whole
// run was not shorter (68 min at load 7-9): these builds and the tests share the same 2 cores,
// and the real-node suite waited for its images. Only less build work shortens a fresh run.
// So the egress suite runs desktop-browser (the minimal desktop + both browsers + certutil)
// instead of the full desktop. Measured one after another under the bench lock (load 1.6-2.8,
// .debs cached, 2026-12-07): Debian layer desktop 1,835 MiB in 160 s wall / 171 s CPU,
// desktop-browser 1,228 MiB in 120 s / 122 s CPU, desktop-minimal 565 MiB in 110 s / 105 s CPU;
// desktop-browser imports into containerd in 64 s (the desktop in 100-110 s) and egress-pod
// passes on it (6/6). Most of a Debian layer's time does not grow with its packages (minimal
// and browser differ by 10 s); run 15's 543 s for the desktop was load and downloads. Part of
// that fixed time was copying the whole .deb cache in and out of every rootfs: hard links
// instead (rootfs.mjs debCacheHooks) took the api layer from 63.8 / 72.2 s to 50.8 / 48.8 s
// (CPU 69 / 78 s to 51 / 50 s, alternated, load 1.5-1.9), with the same layer digest.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureImages } from '../images/build.mjs';
import { kubeToolsDir } from './kube-paths.mjs';
import { ensureNodeTools } from './kubelet-tools.mjs';
import { dim, red, say, step } from './ui.mjs';

/**
 * The images the real-node suite runs, built by scripts/images/build.mjs: the desktop (minimal,
 * and desktop-browser, the minimal one with the browsers egress-pod drives — not the full
 * desktop, whose LibreOffice and fonts no test opens and whose Debian layer took 543-561 s of the
 * run-15 figures above) and the chart's api, worker and in-chart PostgreSQL and Redis
 * (helm-install).
 */
const REAL_NODE_IMAGES = Object.freeze([
  'pause',
  'desktop-minimal',
  'desktop-browser',
  'api',
  'worker',
  'postgres',
  'redis',
]);

/**
 * Their progress lines (a heartbeat every 15 s) go to the terminal until Vitest starts, then to
 * a file named on the terminal, so that they do not cut into Vitest's own lines. The start and
 * end line of each step stay on the terminal.
 */
const logFile = () => join(kubeToolsDir(), 'beside-tests.log');
let toFile = false;
function besideLog(line) {
  if (!toFile) return say(line);
  mkdirSync(kubeToolsDir(), { recursive: true });
  // eslint-disable-next-line no-control-regex
  appendFileSync(logFile(), `${new Date().toISOString()} ${line.replace(/\x1b\[[0-9;]*m/g, '')}\n`);
}

/**
 * realNodeStep runs a step only the real-node suite needs; a failure (a Debian mirror that does
 * not answer, a build error) is printed and the other suites still run — the real-node suite
 * then fails with the same error when it tries again. Resolves either way.
 */
function realNodeStep(name, fn) {
  return step(name, fn).catch((error) =>
    say(red(`${name} failed; the real-node suite will fail: ${error.message ?? error}`)),
  );
}

/** startDebianLayers makes the images' Debian layers (they need neither npm ci nor the build). */
export function startDebianLayers() {
  return realNodeStep('image Debian layers (real-node suite)', () =>
    ensureImages(REAL_NODE_IMAGES, { debianOnly: true, log: besideLog }),
  );
}

/**
 * startNodeTools builds kubelet and the rest (≈ 4 min after kube-apiserver's build, whose cache
 * they share: start it after that one, or both compile the shared packages).
 */
export function startNodeTools() {
  return realNodeStep(
    'kubelet, kube-scheduler, kube-controller-manager, kube-proxy (real-node suite)',
    () => ensureNodeTools({ log: besideLog }),
  );
}

/** startImages adds the repository layers once the Debian layers and the build are done. */
export function startImages(debianLayers) {
  return debianLayers.then(() =>
    realNodeStep('images (real-node suite)', () =>
      ensureImages(REAL_NODE_IMAGES, { log: besideLog }),
    ),
  );
}

/** besideVitest sends the progress lines of what is still building to the file, and says so. */
export function besideVitest(stillBuilding) {
  if (stillBuilding.length === 0) return;
  toFile = true;
  say(
    dim(
      `still building beside the tests for the real-node suite: ${stillBuilding.join(', ')} ` +
        `(it waits for them); progress in ${logFile()}`,
    ),
  );
}
