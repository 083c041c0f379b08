// The repository layer of an image: /opt/cubicle as the Dockerfiles' build stages leave it (the
// root manifests, every workspace's package.json, production node_modules of the workspaces the
// image runs, and those workspaces with their build output), plus the machine's Node binary at
// /usr/local/bin/node (where node:20-bookworm-slim has it), the Dockerfile's /usr/local/bin links
// and the files it COPYs from the repository. Built from this checkout's `turbo run build` output.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { runLogged } from './rootfs.mjs';

/** The workspace each image runs; its @cubicle/* dependencies come with it. */
export const ENTRY_WORKSPACE = Object.freeze({
  desktop: 'packages/driver-guest',
  api: 'apps/api',
  worker: 'apps/worker',
  web: 'apps/web',
});

/** Never copied from a workspace: installs, caches and build bookkeeping. */
const SKIP = new Set(['node_modules', '.turbo', 'cache', 'coverage', 'test-results']);
const skipFile = (name) => name.endsWith('.tsbuildinfo') || /\.test\.[cm]?[jt]sx?$/.test(name);
/**
 * A workspace's TypeScript sources and tests stay out (the images run dist/; packages/db's
 * generated client is built into dist/generated): the layer, and its cache key, change only with
 * the build output, not with every edit of a source file.
 */
const SKIP_TOP = new Set(['src', 'test']);

/** workspaceDirs lists the repository's workspace folders (root package.json `workspaces` globs of one level). */
export function workspaceDirs(root) {
  const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return workspaces.flatMap((glob) => {
    if (!glob.endsWith('/*')) return existsSync(join(root, glob, 'package.json')) ? [glob] : [];
    const parent = glob.slice(0, -2);
    return readdirSync(join(root, parent))
      .map((name) => `${parent}/${name}`)
      .filter((dir) => existsSync(join(root, dir, 'package.json')));
  });
}

/** closure returns the entry workspace and every @cubicle/* workspace it depends on (production deps). */
export function closure(root, entry) {
  const byName = new Map(
    workspaceDirs(root).map((dir) => [
      JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).name,
      dir,
    ]),
  );
  const seen = new Set();
  const visit = (dir) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const { dependencies = {} } = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    for (const name of Object.keys(dependencies)) if (byName.has(name)) visit(byName.get(name));
  };
  visit(entry);
  return [...seen].sort();
}

function walk(dir, out = [], top = true) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  )) {
    if (SKIP.has(entry.name) || skipFile(entry.name)) continue;
    if (top && entry.isDirectory() && SKIP_TOP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out, false);
    else if (entry.isFile() || entry.isSymbolicLink()) out.push(path);
  }
  return out;
}

/**
 * appInputsHash is the sha256 over everything the repository layer is made of: root manifests and
 * lockfile, every workspace manifest, the closure's files (sources and build output), the Node
 * binary and the Dockerfile's copied files. A rebuild (`turbo run build`) that changes output
 * changes it.
 */
export function appInputsHash(root, name, config) {
  const hash = createHash('sha256');
  const add = (path) => {
    hash.update(`${relative(root, path)}\0`);
    hash.update(readFileSync(path));
    hash.update(`\0${statSync(path).mode & 0o111 ? 'x' : '-'}\0`);
  };
  for (const file of ['package.json', 'package-lock.json']) add(join(root, file));
  for (const dir of workspaceDirs(root)) add(join(root, dir, 'package.json'));
  for (const dir of closure(root, ENTRY_WORKSPACE[name]))
    for (const file of walk(join(root, dir))) add(file);
  for (const copy of config.copies) add(join(root, copy.from));
  hash.update(readFileSync(realpathSync(process.execPath)));
  return hash.digest('hex');
}

/**
 * stageApp fills `dir` with the layer's files: dir/opt/cubicle, dir/usr/local/bin/node and links,
 * and the Dockerfile's COPYs. `npm ci --omit=dev` runs from npm's cache when it can.
 */
export async function stageApp(root, name, config, dir, { logFile, log }) {
  const app = join(dir, 'opt', 'cubicle');
  mkdirSync(app, { recursive: true });
  for (const file of ['package.json', 'package-lock.json'])
    copyFileSync(join(root, file), join(app, file));
  const workspaces = closure(root, ENTRY_WORKSPACE[name]);
  for (const ws of workspaceDirs(root)) {
    mkdirSync(join(app, ws), { recursive: true });
    copyFileSync(join(root, ws, 'package.json'), join(app, ws, 'package.json'));
  }
  // npm's cache already holds every package of the lockfile after the bootstrap's `npm ci`:
  // offline first (no registry round trips), online only if the cache lacks something.
  const npmCi = (mode) =>
    runLogged(
      'npm',
      [
        'ci',
        '--omit=dev',
        '--ignore-scripts',
        mode,
        '--no-audit',
        '--no-fund',
        '--include-workspace-root',
        ...workspaces.flatMap((ws) => ['-w', ws]),
      ],
      { cwd: app, logFile, label: `${name}: npm ci --omit=dev ${mode}`, log },
    );
  await npmCi('--offline').catch(() => npmCi('--prefer-offline'));
  for (const ws of workspaces) {
    cpSync(join(root, ws), join(app, ws), {
      recursive: true,
      filter: (src) => {
        const base = src.split('/').at(-1);
        const top = relative(join(root, ws), src).split('/')[0];
        return !(SKIP.has(base) || skipFile(base) || SKIP_TOP.has(top));
      },
    });
  }
  const bin = join(dir, 'usr', 'local', 'bin');
  mkdirSync(bin, { recursive: true });
  copyFileSync(realpathSync(process.execPath), join(bin, 'node'));
  chmodSync(join(bin, 'node'), 0o755);
  for (const copy of config.copies) {
    const to = join(dir, copy.to);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(root, copy.from), to);
  }
  for (const file of config.executables) chmodSync(join(dir, file), 0o755);
  for (const [link, target] of Object.entries(config.links)) symlinkSync(target, join(bin, link));
  // Owned by root, read by uid 1000: the process cannot change its own code.
  return workspaces;
}
