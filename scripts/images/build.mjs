// Builds Cubicle's images (images/*/Dockerfile) without a registry, a base image or a container
// engine: a Debian layer made by mmdebstrap from the packages the Dockerfile installs, and a
// layer of this checkout's build output (app.mjs), written as OCI image layouts (oci.mjs) into a
// per-machine cache, for the real-node test cluster (test/harness/kube/real-node) to import
// into its containerd. The Dockerfiles stay the published recipe: config, packages, links and
// user are read from them (dockerfile.mjs). Each layer is cached under the hash of its inputs, so
// a second run with nothing changed only hashes the inputs (≈ 1 s).
//   node scripts/images/build.mjs [--debian-only] [pause|desktop-minimal|desktop-browser|desktop|api|worker|web|postgres|redis ...]
//   (default: pause desktop-minimal desktop-browser api worker web postgres redis), prints sizes and times, then
//   the images as JSON; --debian-only makes only the Debian layers (what the bootstrap does
//   beside the build). postgres and redis are the chart's in-chart datastores for the real node
//   (datastores.mjs: Docker Hub's images cannot be pulled here).
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeToolsDir } from '../lib/kube-paths.mjs';
import { withToolLock } from '../lib/tool-lock.mjs';
import { dim, formatMs, say } from '../lib/ui.mjs';
import { appInputsHash, stageApp } from './app.mjs';
import { datastoreSpecs } from './datastores.mjs';
import { imageConfigOf } from './dockerfile.mjs';
import { tarLayer, writeImage } from './oci.mjs';
import { buildRootfs, DEBIAN, runLogged } from './rootfs.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Bump when the way layers are made changes (the cache keys include it). */
const RECIPE_VERSION = 1;
/** File times in every layer (SOURCE_DATE_EPOCH): 2025-01-01T00:00:00Z. */
const EPOCH = 1735689600;

/**
 * The images: Dockerfile folder and which list of desktop-packages.json (`packages` is the full
 * desktop; `minimal` is Xvfb + fluxbox + AT-SPI + x11vnc + galculator, what most tests need).
 * `apps` adds entries of that file's `apps` list: desktop-browser is the minimal desktop with
 * the two browsers and certutil, all the egress suite drives (test/e2e/real-node/egress-pod), so
 * `npm test` never builds the full desktop (LibreOffice, CJK fonts, FFmpeg…: a 1,835 MiB Debian
 * layer). The published `desktop` image stays the full list.
 */
export const IMAGES = Object.freeze({
  'desktop-minimal': { dockerfile: 'desktop', listKey: 'minimal' },
  'desktop-browser': {
    dockerfile: 'desktop',
    listKey: 'minimal',
    apps: Object.freeze(['chromium', 'firefox-esr', 'libnss3-tools']),
  },
  desktop: { dockerfile: 'desktop', listKey: 'packages' },
  api: { dockerfile: 'api' },
  worker: { dockerfile: 'worker' },
  web: { dockerfile: 'web' },
});
// `pause` (no Dockerfile) is the pod sandbox image of the real node's containerd.
export const TEST_IMAGES = Object.freeze([
  'pause',
  'desktop-minimal',
  'desktop-browser',
  'api',
  'worker',
  'web',
  'postgres',
  'redis',
]);

/**
 * imageConfig is the Dockerfile's config for an image of IMAGES, with its `apps` added to the
 * packages: each must be in desktop-packages.json's `apps` (what the published desktop ships),
 * so a test image cannot hold a package the product does not.
 */
export function imageConfig(name, repoRoot = root) {
  const spec = IMAGES[name];
  const config = imageConfigOf(repoRoot, spec.dockerfile, { listKey: spec.listKey });
  if (!spec.apps) return config;
  const shipped = imageConfigOf(repoRoot, spec.dockerfile, { listKey: 'apps' }).packages;
  const unknown = spec.apps.filter((p) => !shipped.includes(p));
  if (unknown.length > 0)
    throw new Error(
      `${name}: ${unknown.join(', ')} not in desktop-packages.json's apps (${shipped.join(', ')})`,
    );
  return { ...config, packages: [...config.packages, ...spec.apps] };
}

/** imagesDir is where layers, layouts and the .deb cache live (beside the Go tools). */
export function imagesDir(env = process.env) {
  return join(kubeToolsDir(env), 'images');
}

/**
 * removeLater deletes a work dir with a detached, niced `rm -rf`: a staged /opt/cubicle is tens of
 * thousands of small files, and deleting them in-process took ≈ 60 s on a loaded machine.
 */
function removeLater(dir) {
  spawn('nice', ['-n', '10', 'rm', '-rf', dir], { detached: true, stdio: 'ignore' }).unref();
}

const sha = (value) => createHash('sha256').update(value).digest('hex');
const mib = (bytes) => `${(bytes / 1048576).toFixed(0)} MiB`;

function mmdebstrapVersion() {
  const result = spawnSync('mmdebstrap', ['--version'], { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(
      'mmdebstrap is not installed (apt-get install mmdebstrap; scripts/lib/apt.mjs lists it)',
    );
  return result.stdout.trim();
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** cachedLayer returns the descriptor recorded under `key` while its blob exists, else builds it. */
async function cachedLayer(store, kind, key, build) {
  const record = join(store, kind, `${key}.json`);
  const known = readJson(record);
  if (known && existsSync(join(store, 'blobs', 'sha256', known.digest.slice(7))))
    return { ...known, cached: true };
  const started = performance.now();
  const desc = await build();
  const ms = performance.now() - started;
  mkdirSync(dirname(record), { recursive: true });
  writeFileSync(record, JSON.stringify({ ...desc, buildMs: Math.round(ms) }));
  return { ...desc, buildMs: Math.round(ms), cached: false };
}

/**
 * buildPause makes localhost/cubicle/pause: one static binary (images/pause/pause.c, gcc -static),
 * the pod sandbox image containerd would otherwise pull from a registry.
 */
async function buildPause(store, log) {
  const source = join(root, 'images', 'pause', 'pause.c');
  const key = sha(JSON.stringify({ RECIPE_VERSION, EPOCH, source: readFileSync(source, 'utf8') }));
  const logFile = join(store, 'build-pause.log');
  const work = mkdtempSync(join(store, 'work-pause-'));
  try {
    const layer = await cachedLayer(store, 'app', `pause-${key}`, async () => {
      const dir = join(work, 'layer');
      mkdirSync(dir);
      await runLogged('gcc', ['-Os', '-static', '-o', join(dir, 'pause'), source], {
        logFile,
        label: 'pause: gcc -static',
        log,
      });
      return tarLayer(store, dir, {
        epoch: EPOCH,
        owner0: true,
        logFile,
        label: 'pause: tar',
        log,
      });
    });
    const layers = [{ mediaType: layer.mediaType, digest: layer.digest, size: layer.size }];
    const ref = `localhost/cubicle/pause:${sha(JSON.stringify(layers)).slice(0, 12)}`;
    const layout = join(store, 'layouts', 'pause');
    const manifest = writeImage(store, layout, {
      ref,
      layers,
      epoch: EPOCH,
      config: { User: '65535:65535', Entrypoint: ['/pause'], WorkingDir: '/' },
      history: ['gcc -Os -static images/pause/pause.c'],
    });
    log(`${ref}: ${(layer.size / 1024).toFixed(0)} KiB`);
    return {
      name: 'pause',
      ref,
      layout,
      manifestDigest: manifest.digest,
      size: layer.size,
      layers: { repository: layer },
    };
  } finally {
    removeLater(work);
  }
}

/** buildDatastore makes a Debian-only image of datastores.mjs (postgres, redis). */
async function buildDatastore(store, name, spec, log) {
  const logFile = join(store, `build-${name}.log`);
  const work = mkdtempSync(join(store, `work-${name}-`));
  const started = performance.now();
  const login = { name: 'cubicle', home: '/home/cubicle' };
  try {
    const key = sha(
      JSON.stringify({
        RECIPE_VERSION,
        EPOCH,
        DEBIAN,
        mirror: process.env.CUBICLE_DEBIAN_MIRROR ?? '',
        mmdebstrap: mmdebstrapVersion(),
        packages: spec.packages,
        // The hooks as any clone reads them, not with this clone's path in them.
        hooks: spec.keyHooks ?? spec.hooks,
        inputs: spec.inputs,
        login,
      }),
    );
    const rootfs = await cachedLayer(store, 'rootfs', key, async () => {
      const dir = join(work, 'rootfs');
      await buildRootfs(dir, {
        packages: spec.packages,
        login,
        hooks: spec.hooks,
        epoch: EPOCH,
        debCache: join(store, 'debs'),
        logFile,
        log,
      });
      return tarLayer(store, dir, {
        epoch: EPOCH,
        logFile,
        label: `${name}: Debian layer tar`,
        log,
      });
    });
    const layers = [{ mediaType: rootfs.mediaType, digest: rootfs.digest, size: rootfs.size }];
    const ref = `localhost/cubicle/${name}:${sha(JSON.stringify({ layers, config: spec.config })).slice(0, 12)}`;
    const layout = join(store, 'layouts', name);
    const manifest = writeImage(store, layout, {
      ref,
      layers,
      epoch: EPOCH,
      config: spec.config,
      history: [`mmdebstrap ${DEBIAN.suite} minbase + ${spec.packages.join(' ')}`],
    });
    log(
      `${ref}: ${mib(rootfs.size)} (Debian layer ${rootfs.cached ? 'cached' : `built in ${formatMs(rootfs.buildMs)}`}) in ${formatMs(performance.now() - started)}`,
    );
    return {
      name,
      ref,
      layout,
      manifestDigest: manifest.digest,
      size: rootfs.size,
      layers: { debian: rootfs },
    };
  } finally {
    removeLater(work);
  }
}

async function buildImage(store, name, log, { debianOnly = false } = {}) {
  if (name === 'pause') return buildPause(store, log);
  const datastore = datastoreSpecs(root)[name];
  if (datastore) return buildDatastore(store, name, datastore, log);
  const spec = IMAGES[name];
  if (!spec)
    throw new Error(
      `unknown image ${name} (known: pause, ${Object.keys(IMAGES).join(', ')}, postgres, redis)`,
    );
  const config = imageConfig(name);
  const logFile = join(store, `build-${name}.log`);
  const work = mkdtempSync(join(store, `work-${name}-`));
  const started = performance.now();
  try {
    const rootfsKey = sha(
      JSON.stringify({
        RECIPE_VERSION,
        EPOCH,
        DEBIAN,
        mirror: process.env.CUBICLE_DEBIAN_MIRROR ?? '',
        mmdebstrap: mmdebstrapVersion(),
        packages: [...config.packages].sort(),
        login: config.login,
      }),
    );
    const rootfs = await cachedLayer(store, 'rootfs', rootfsKey, async () => {
      const dir = join(work, 'rootfs');
      await buildRootfs(dir, {
        packages: config.packages,
        login: config.login,
        epoch: EPOCH,
        debCache: join(store, 'debs'),
        logFile,
        log,
      });
      return tarLayer(store, dir, {
        epoch: EPOCH,
        logFile,
        label: `${name}: Debian layer tar`,
        log,
      });
    });
    // The bootstrap makes the Debian layers beside `npm ci` and the build (they need neither);
    // the repository layer waits for the build output.
    if (debianOnly) {
      log(
        `${name}: Debian layer ${mib(rootfs.size)} ${rootfs.cached ? 'cached' : `built in ${formatMs(rootfs.buildMs)}`}`,
      );
      return { name, debian: rootfs };
    }
    const appKey = sha(
      JSON.stringify({
        RECIPE_VERSION,
        EPOCH,
        inputs: appInputsHash(root, spec.dockerfile, config),
        config,
      }),
    );
    const app = await cachedLayer(store, 'app', `${name}-${appKey}`, async () => {
      const dir = join(work, 'app');
      const workspaces = await stageApp(root, spec.dockerfile, config, dir, { logFile, log });
      log(dim(`${name}: /opt/cubicle with ${workspaces.join(', ')}`));
      return tarLayer(store, dir, {
        epoch: EPOCH,
        owner0: true,
        logFile,
        label: `${name}: repository layer tar`,
        log,
      });
    });
    const layers = [rootfs, app].map(({ mediaType, digest, size }) => ({
      mediaType,
      digest,
      size,
    }));
    const imageKey = sha(JSON.stringify({ layers, config }));
    const ref = `localhost/cubicle/${name}:${imageKey.slice(0, 12)}`;
    const layout = join(store, 'layouts', name);
    const manifest = writeImage(store, layout, {
      ref,
      layers,
      epoch: EPOCH,
      config: {
        User: config.user,
        Env: Object.entries(config.env).map(([k, v]) => `${k}=${v}`),
        Entrypoint: config.entrypoint,
        ...(config.cmd.length > 0 ? { Cmd: config.cmd } : {}),
        WorkingDir: config.workdir,
        ExposedPorts: Object.fromEntries(config.ports.map((p) => [`${p}/tcp`, {}])),
        Labels: { 'org.opencontainers.image.source': `images/${spec.dockerfile}/Dockerfile` },
      },
      history: [
        `mmdebstrap ${DEBIAN.suite} minbase + ${config.packages.join(' ')}`,
        `/opt/cubicle (${name}) from this checkout's build + node ${process.version}`,
      ],
    });
    const size = rootfs.size + app.size;
    const how = (layer) => (layer.cached ? 'cached' : `built in ${formatMs(layer.buildMs)}`);
    log(
      `${ref}: ${mib(size)} (Debian layer ${mib(rootfs.size)} ${how(rootfs)}, ` +
        `repository layer ${mib(app.size)} ${how(app)}) in ${formatMs(performance.now() - started)}`,
    );
    return {
      name,
      ref,
      layout,
      manifestDigest: manifest.digest,
      size,
      layers: { debian: rootfs, repository: app },
    };
  } finally {
    removeLater(work);
  }
}

/**
 * pruneBlobs deletes blobs no layout links and no Debian-layer record names (each rebuild of a
 * repository layer after a code change leaves a 160–540 MB blob behind), and the records of
 * repository layers whose blob is gone. Debian layers stay: they are the slow ones.
 */
function pruneBlobs(store, log) {
  const keep = new Set();
  const layouts = join(store, 'layouts');
  for (const name of existsSync(layouts) ? readdirSync(layouts) : [])
    for (const hex of readdirSync(join(layouts, name, 'blobs', 'sha256'))) keep.add(hex);
  for (const file of readdirSync(join(store, 'rootfs')))
    keep.add(readJson(join(store, 'rootfs', file))?.digest?.slice(7));
  let freed = 0;
  const blobs = join(store, 'blobs', 'sha256');
  for (const hex of readdirSync(blobs)) {
    if (keep.has(hex)) continue;
    freed += statSync(join(blobs, hex)).size;
    unlinkSync(join(blobs, hex));
  }
  for (const file of readdirSync(join(store, 'app'))) {
    const digest = readJson(join(store, 'app', file))?.digest;
    if (!digest || !existsSync(join(blobs, digest.slice(7)))) unlinkSync(join(store, 'app', file));
  }
  if (freed > 0) log(dim(`images: removed ${mib(freed)} of layers no image uses any more`));
}

/**
 * ensureImages builds (or finds cached) the named images and returns, per name, its ref (e.g.
 * localhost/cubicle/desktop-minimal:<12 hex of the image's inputs>), the layout directory to
 * import and sizes. Needs root (mmdebstrap), mmdebstrap and GNU tar; one build at a time per
 * machine (a lock in the cache).
 */
export async function ensureImages(names = TEST_IMAGES, { log = say, debianOnly = false } = {}) {
  const store = imagesDir();
  mkdirSync(store, { recursive: true });
  return withToolLock({ dir: store, lockName: 'build.lock', what: 'the images', log }, async () => {
    const started = performance.now();
    const out = {};
    // One at a time: each step is CPU- or disk-bound already, and they share the .deb cache.
    for (const name of names) out[name] = await buildImage(store, name, log, { debianOnly });
    if (!debianOnly) pruneBlobs(store, log);
    log(dim(`images: ${names.join(', ')} ready in ${formatMs(performance.now() - started)}`));
    return out;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const args = process.argv.slice(2);
    const debianOnly = args.includes('--debian-only');
    const names = args.filter((a) => !a.startsWith('--'));
    const built = await ensureImages(names.length > 0 ? names : TEST_IMAGES, { debianOnly });
    console.log(JSON.stringify(built, null, 2));
  } catch (error) {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  }
}
