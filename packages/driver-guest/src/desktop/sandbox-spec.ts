import { lstatSync, readFileSync, readlinkSync, realpathSync, existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Fixed paths inside every sandbox. */
export const SANDBOX_PATHS = {
  home: '/home/sandbox',
  /** Sockets of the guest driver and VNC, bind-mounted from a directory the control plane owns. */
  sockets: '/run/cubicle/sock',
  guestSocket: '/run/cubicle/sock/guest.sock',
  vncSocket: '/run/cubicle/sock/vnc.sock',
  /** Per-sandbox tmpfs (mode 0700, the sandbox user's) for per-claim secret files. */
  secrets: '/run/cubicle/secrets',
  /** Where the guest driver's code (and only that of the checkout) is mounted, read-only. */
  code: '/opt/cubicle',
} as const;

/** The sandbox user as its own processes see it (a user namespace maps it to the host uid). */
export const SANDBOX_USER = { name: 'sandbox', uid: 1000, gid: 1000 };

const MiB = 1024 * 1024;
/** tmpfs limits: memory is only used as files are written, these cap what one sandbox can take. */
const TMPFS_BYTES = { tmp: 1024 * MiB, home: 1024 * MiB, shm: 256 * MiB, secrets: 16 * MiB };

/** Top-level host entries that are (on merged-/usr systems) symlinks into /usr, or real dirs. */
const SYSTEM_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

export interface CodeMount {
  host: string;
  sandbox: string;
}

/**
 * guestCodeMounts lists what the sandboxed daemon needs of this installation, mapped under
 * /opt/cubicle: the node_modules directories above the driver package (third-party code) and
 * the driver plus the workspace packages it depends on (@cubicle/*, followed transitively).
 * Nothing else of the checkout (sources of the control plane, .cubicle/, configuration) is
 * mounted.
 */
export function guestCodeMounts(): CodeMount[] {
  const driverDir = realpathSync(fileURLToPath(new URL('../../', import.meta.url)));
  const moduleDirs: string[] = [];
  for (let dir = driverDir; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules'))) moduleDirs.push(join(dir, 'node_modules'));
    if (dirname(dir) === dir) break;
  }
  const root = moduleDirs.length > 0 ? dirname(moduleDirs[moduleDirs.length - 1]!) : driverDir;
  const packages = new Set<string>();
  const visit = (pkgDir: string) => {
    if (packages.has(pkgDir)) return;
    packages.add(pkgDir);
    const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (!name.startsWith('@cubicle/')) continue;
      const linked = moduleDirs.map((m) => join(m, name)).find((p) => existsSync(p));
      if (linked) visit(realpathSync(linked));
    }
  };
  visit(driverDir);
  const toSandbox = (host: string) => {
    const rel = relative(root, host);
    if (rel.startsWith('..') || rel.startsWith(sep))
      throw new Error(`guest code outside the installation root: ${host}`);
    return join(SANDBOX_PATHS.code, rel);
  };
  // A package's own node_modules (nested dependencies) comes with its directory.
  return [...moduleDirs.reverse(), ...packages].map((host) => ({
    host,
    sandbox: toSandbox(host),
  }));
}

/** sandboxPath maps a host path of the mounted guest code to its path inside the sandbox. */
export function sandboxPath(mounts: CodeMount[], host: string): string {
  const real = realpathSync(host);
  const mount = mounts
    .filter((m) => real === m.host || real.startsWith(m.host + sep))
    .sort((a, b) => b.host.length - a.host.length)[0];
  if (!mount) throw new Error(`${host} is not mounted in the sandbox`);
  return join(mount.sandbox, relative(mount.host, real));
}

export interface SandboxSpec {
  /** Host directory bound on /run/cubicle/sock (writable by the sandbox user). */
  socketDir: string;
  /** Host files replacing /etc/passwd and /etc/group (they name the sandbox user). */
  passwdFile: string;
  groupFile: string;
  code: CodeMount[];
  /** The whole environment of the sandbox: nothing else is inherited. */
  env: Record<string, string>;
  /** The descriptor bwrap reports the sandbox's PID 1 (host pid, namespaces) on. */
  infoFd: number;
}

/**
 * bwrapOptions builds the bubblewrap options (passed through `--args FD`, so the host paths
 * they name do not show in the sandbox's process list) of one desktop sandbox: new user, mount, PID,
 * IPC, UTS, network and cgroup namespaces (`--unshare-all`: only a loopback interface), a new
 * /proc and /dev, the system directories read-only, a private tmpfs /tmp, home, /dev/shm and
 * secrets directory, and the environment built from `env` alone. The sandbox's PID 1 is
 * bubblewrap's reaper; killing it ends every process of the sandbox. It is deliberately not
 * tied to its parent (no --die-with-parent): a desktop outlives a worker restart and is
 * adopted or stopped through its session directory.
 */
export function bwrapOptions(spec: SandboxSpec): string[] {
  const args = ['--unshare-all', '--uid', String(SANDBOX_USER.uid)];
  args.push('--gid', String(SANDBOX_USER.gid), '--hostname', 'sandbox', '--new-session');
  args.push('--ro-bind', '/usr', '/usr', '--ro-bind', '/etc', '/etc');
  for (const name of SYSTEM_LINKS) {
    const host = `/${name}`;
    let stat;
    try {
      stat = lstatSync(host);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(host), host);
    else if (stat.isDirectory()) args.push('--ro-bind', host, host);
  }
  args.push('--ro-bind', spec.passwdFile, '/etc/passwd', '--ro-bind', spec.groupFile, '/etc/group');
  // Unreadable to the sandbox user anyway; hidden all the same.
  for (const secret of ['/etc/shadow', '/etc/gshadow', '/etc/sudoers'])
    if (existsSync(secret)) args.push('--ro-bind', '/dev/null', secret);
  args.push('--ro-bind-try', '/var/cache/fontconfig', '/var/cache/fontconfig');
  args.push('--proc', '/proc', '--dev', '/dev');
  const tmpfs = (path: string, bytes: number, perms = '1777') =>
    args.push('--perms', perms, '--size', String(bytes), '--tmpfs', path);
  tmpfs('/tmp', TMPFS_BYTES.tmp);
  tmpfs('/dev/shm', TMPFS_BYTES.shm);
  tmpfs('/var/tmp', TMPFS_BYTES.tmp);
  tmpfs(SANDBOX_PATHS.home, TMPFS_BYTES.home, '0700');
  tmpfs(SANDBOX_PATHS.secrets, TMPFS_BYTES.secrets, '0700');
  args.push('--bind', spec.socketDir, SANDBOX_PATHS.sockets);
  for (const mount of spec.code) args.push('--ro-bind', mount.host, mount.sandbox);
  args.push('--chdir', SANDBOX_PATHS.home, '--clearenv');
  for (const [name, value] of Object.entries(spec.env)) args.push('--setenv', name, value);
  args.push('--info-fd', String(spec.infoFd));
  return args;
}

/** LOCALE_VARS may come from the launcher's environment (they select a language, nothing more). */
const LOCALE_VARS = ['LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ'];

/**
 * sandboxEnv is the allow-listed environment of a sandbox: a login-like base, the locale of the
 * launcher, and nothing else of it (no database URL, keys or tokens can flow in). The desktop's
 * own variables (DISPLAY, buses) and the pool's env are added inside by the desktop launcher.
 */
export function sandboxEnv(launcher: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: SANDBOX_PATHS.home,
    USER: SANDBOX_USER.name,
    LOGNAME: SANDBOX_USER.name,
    SHELL: '/bin/sh',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
  };
  for (const name of LOCALE_VARS) {
    const value = launcher[name];
    if (value && /^[A-Za-z0-9_.@:/+-]{1,64}$/.test(value)) env[name] = value;
  }
  return env;
}

export const passwdText = () =>
  `root:x:0:0:root:/root:/usr/sbin/nologin\n` +
  `${SANDBOX_USER.name}:x:${SANDBOX_USER.uid}:${SANDBOX_USER.gid}:Cubicle sandbox:${SANDBOX_PATHS.home}:/bin/sh\n` +
  `nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const groupText = () =>
  `root:x:0:\n${SANDBOX_USER.name}:x:${SANDBOX_USER.gid}:\nnogroup:x:65534:\n`;
