import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SESSION_DIR_PREFIX, SESSION_FILE } from './session-registry.js';

/**
 * The guest's code as the sandbox sees it: what stageGuestCode copied, in the installation's
 * own layout (packages/…, node_modules/…), so the daemon resolves its modules as on the host.
 */
export interface StagedCode {
  /** The host directory (bind-mounted read-only on SANDBOX_PATHS.code). */
  dir: string;
  /** The content key naming it (recorded in session files, see pruneStaged). */
  key: string;
  /** relPath maps a file of the checkout (the entry script) to its path inside `dir`. */
  relPath(host: string): string;
}

/** One package of the daemon's dependency closure, and how the installation links to it. */
interface ClosurePackage {
  real: string;
  /** A workspace package (ours): only package.json and dist/ are staged. */
  isWorkspace: boolean;
}
interface Closure {
  root: string;
  packages: ClosurePackage[];
  /** Symlinks as installed (npm workspaces link node_modules/@cubicle/x → packages/x). */
  links: { at: string; to: string }[];
}

const driverDir = () => realpathSync(fileURLToPath(new URL('../../', import.meta.url)));

/**
 * guestCodeClosure follows the daemon's package.json dependencies (optional and peer ones where
 * installed) as Node resolves them, from the driver package through every node_modules above
 * it: the only code of this installation the sandbox gets.
 */
function guestCodeClosure(): Closure {
  const start = driverDir();
  const packages = new Map<string, ClosurePackage>();
  const links = new Map<string, string>();
  let root = start;
  const resolve = (from: string, name: string) => {
    for (let dir = from; ; dir = dirname(dir)) {
      const at = join(dir, 'node_modules', name);
      if (existsSync(join(at, 'package.json'))) {
        if (dir.length < root.length) root = dir;
        return at;
      }
      if (dirname(dir) === dir) return null;
    }
  };
  const visit = (real: string) => {
    if (packages.has(real)) return;
    packages.set(real, { real, isWorkspace: !real.split(sep).includes('node_modules') });
    const manifest = JSON.parse(readFileSync(join(real, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const names = Object.keys({
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
      ...manifest.peerDependencies,
    });
    for (const name of names) {
      const at = resolve(real, name);
      if (!at) continue; // an optional or peer dependency not installed
      const target = realpathSync(at);
      if (lstatSync(at).isSymbolicLink()) links.set(at, target);
      visit(target);
    }
  };
  visit(start);
  const inside = (path: string) => {
    const rel = relative(root, path);
    if (rel.startsWith('..') || rel.startsWith(sep))
      throw new Error(`guest code outside the installation root ${root}: ${path}`);
    return rel;
  };
  return {
    root,
    packages: [...packages.values()].map((p) => (inside(p.real), p)),
    links: [...links].map(([at, to]) => ({ at: inside(at), to: inside(to) })),
  };
}

/** filesOf lists a package's staged files (relative to the root), skipping nested node_modules. */
function filesOf(root: string, pkg: ClosurePackage): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else if (entry.isFile()) out.push(relative(root, path));
    }
  };
  if (pkg.isWorkspace) {
    out.push(relative(root, join(pkg.real, 'package.json')));
    if (existsSync(join(pkg.real, 'dist'))) walk(join(pkg.real, 'dist'));
  } else walk(pkg.real);
  return out;
}

/**
 * contentKey names a build of the guest code: the size and mtime of every staged file of the
 * workspace packages (rebuilt often), and of each third-party package's package.json (npm
 * rewrites it whenever it installs the package), plus the links.
 */
function contentKey(closure: Closure, files: string[]): string {
  const hash = createHash('sha256');
  for (const file of files) {
    const isManifestOrOurs =
      file.endsWith(`${sep}package.json`) || !file.split(sep).includes('node_modules');
    if (!isManifestOrOurs) continue;
    const s = statSync(join(closure.root, file));
    hash.update(`${file}\0${s.size}\0${s.mtimeMs}\n`);
  }
  for (const link of closure.links) hash.update(`${link.at}\0${link.to}\n`);
  return hash.digest('hex').slice(0, 24);
}

let cached: { closure: Closure; files: string[]; key: string } | null = null;
/** currentBuild is the closure and its key; re-resolved only when the key changed. */
function currentBuild() {
  if (cached) {
    try {
      if (contentKey(cached.closure, cached.files) === cached.key) return cached;
    } catch {
      /* a file went away: re-resolve */
    }
  }
  const closure = guestCodeClosure();
  const files = closure.packages.flatMap((p) => filesOf(closure.root, p));
  cached = { closure, files, key: contentKey(closure, files) };
  return cached;
}

/**
 * stagedRoot is where staged builds live: root-owned /var/cache/cubicle/guest-code when we are
 * root (the sandbox uids read it, no host user can write it), else a directory of our own in
 * the temp dir. Either must be ours and not writable by others, or we refuse to use it.
 */
async function stagedRoot(): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const dir =
    uid === 0 ? '/var/cache/cubicle/guest-code' : join(tmpdir(), `cubicle-guest-code-${uid}`);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  if (uid === 0) await chmod(dirname(dir), 0o755);
  await chmod(dir, 0o755);
  const s = await lstat(dir);
  if (!s.isDirectory() || s.uid !== uid || (s.mode & 0o022) !== 0)
    throw new Error(`${dir} is not a directory of uid ${uid} only: refusing to stage code there`);
  return dir;
}

/** copyTree copies the listed files (and links) under `to`: directories 0755, files 0644/0755. */
async function copyTree(closure: Closure, files: string[], to: string): Promise<void> {
  const dirs = new Set<string>();
  for (const file of files) dirs.add(dirname(file));
  for (const link of closure.links) dirs.add(dirname(link.at));
  for (const dir of [...dirs].sort()) await mkdir(join(to, dir), { recursive: true });
  const queue = [...files];
  const copyOne = async (): Promise<void> => {
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      const target = join(to, file);
      await copyFile(join(closure.root, file), target);
      const mode = (await stat(target)).mode & 0o111 ? 0o755 : 0o644;
      await chmod(target, mode);
    }
  };
  await Promise.all(Array.from({ length: 16 }, copyOne));
  for (const link of closure.links)
    await symlink(relative(dirname(join(to, link.at)), join(to, link.to)), join(to, link.at));
  // mkdir's mode passes through the umask: make every directory traversable explicitly.
  const chmodDirs = async (dir: string): Promise<void> => {
    await chmod(dir, 0o755);
    for (const entry of await readdir(dir, { withFileTypes: true }))
      if (entry.isDirectory()) await chmodDirs(join(dir, entry.name));
  };
  await chmodDirs(to);
}

/**
 * pruneStaged removes builds no session uses (its session file names the build's key) and
 * leftovers of interrupted copies, sparing anything younger than an hour (a sandbox that is
 * starting has no session file yet).
 */
async function pruneStaged(root: string, keep: string): Promise<void> {
  const inUse = new Set([keep]);
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    if (!name.startsWith(SESSION_DIR_PREFIX)) continue;
    const text = await readFile(join(tmpdir(), name, SESSION_FILE), 'utf8').catch(() => '');
    const key = /"code":"([0-9a-f]+)"/.exec(text)?.[1];
    if (key) inUse.add(key);
  }
  for (const name of await readdir(root)) {
    if (inUse.has(name)) continue;
    const path = join(root, name);
    const age = Date.now() - (await stat(path).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
    if (age > 3_600_000) await rm(path, { recursive: true, force: true });
  }
}

/**
 * stageGuestCode makes the daemon's code readable by any sandbox uid wherever the checkout is
 * (a clone under a 0700 directory such as /root or `mktemp -d` is not traversable by them) and
 * keeps the checkout's path out of the sandbox's mountinfo: the dependency closure is copied,
 * once per build, into a directory named by its content key, which every sandbox of that build
 * shares read-only. A later start of the same build costs a few hundred stat calls.
 */
export async function stageGuestCode(): Promise<StagedCode> {
  const build = currentBuild();
  const root = await stagedRoot();
  const dir = join(root, build.key);
  if (!existsSync(dir)) {
    const temp = join(root, `.tmp-${build.key}-${randomBytes(4).toString('hex')}`);
    try {
      await copyTree(build.closure, build.files, temp);
      await rename(temp, dir).catch((err: NodeJS.ErrnoException) => {
        // Another launcher staged the same build first: theirs is as good.
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
    await pruneStaged(root, build.key).catch(() => undefined);
  }
  const codeRoot = build.closure.root;
  return {
    dir,
    key: build.key,
    relPath: (host: string) => {
      const rel = relative(codeRoot, realpathSync(host));
      if (rel.startsWith('..') || !build.files.includes(rel))
        throw new Error(`${host} is not part of the staged guest code`);
      return rel;
    },
  };
}
