import { lstatSync, readlinkSync, existsSync } from 'node:fs';
import { HOST_STAGE_DIR } from '../archive/staging.js';

/** Fixed paths inside every sandbox. */
export const SANDBOX_PATHS = {
  home: '/home/sandbox',
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

/**
 * tmpfsBytes sizes the sandbox's tmpfs for its memory limit. What a sandbox writes to a tmpfs is
 * charged to its memory cgroup (shmem pages, v1 and v2 alike: measured here), so the limit bounds
 * them all together; each is also capped at half the limit (shm at an eighth) so that one full
 * directory leaves the desktop room to run.
 */
export function tmpfsBytes(memoryMb?: number): typeof TMPFS_BYTES {
  if (!memoryMb) return TMPFS_BYTES;
  const limit = memoryMb * MiB;
  const cap = (bytes: number, share: number) => Math.min(bytes, Math.floor(limit * share));
  return {
    tmp: cap(TMPFS_BYTES.tmp, 1 / 2),
    home: cap(TMPFS_BYTES.home, 1 / 2),
    shm: cap(TMPFS_BYTES.shm, 1 / 8),
    secrets: TMPFS_BYTES.secrets,
  };
}

/** Top-level host entries that are (on merged-/usr systems) symlinks into /usr, or real dirs. */
const SYSTEM_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** A host directory of guest code (stage-guest-code.ts) and where the sandbox sees it. */
export interface CodeMount {
  host: string;
  sandbox: string;
}

export interface SandboxSpec {
  /**
   * Descriptors bubblewrap reads /etc/passwd and /etc/group from (they name the sandbox user):
   * data, not host files, so no host path shows in the sandbox's mountinfo.
   */
  passwdFd: number;
  groupFd: number;
  /** The descriptor of the seccomp program (seccomp-filter.ts); null: none for this arch. */
  seccompFd: number | null;
  /** The sandbox's memory limit: sizes its tmpfs (tmpfsBytes); the defaults without one. */
  memoryMb?: number;
  code: CodeMount[];
  /** The whole environment of the sandbox: nothing else is inherited. */
  env: Record<string, string>;
  /** The descriptor bwrap reports the sandbox's PID 1 (host pid, namespaces) on. */
  infoFd: number;
  /**
   * Set when the sandbox runs in a network namespace Cubicle made (the launcher joined it): it
   * is kept (`--share-net`) and /etc/resolv.conf is read from this descriptor.
   */
  resolvConfFd?: number;
  /** When set, /etc/ssl/certs/ca-certificates.crt is read from this descriptor. */
  caBundleFd?: number;
  /** When set, the egress CA alone is read from this descriptor into EGRESS_CA_PATH. */
  egressCaFd?: number;
  /**
   * When set, this host directory is bound read-only at HOST_STAGE_DIR: the control plane on
   * this machine stages a restore's chunks there (archive/staging.ts).
   */
  hostStage?: string;
}

/**
 * Where a sandbox finds Cubicle's egress CA when credentials may be injected at egress (in
 * bubblewrap's own root, so no host directory is touched). The browsers' profiles import it.
 */
export const EGRESS_CA_PATH = '/run/cubicle/egress-ca.pem';

/**
 * bwrapOptions builds the bubblewrap options (passed through `--args FD`, so the host paths
 * they name do not show in the sandbox's process list) of one desktop sandbox: new user, mount, PID,
 * IPC, UTS, network and cgroup namespaces (`--unshare-all`: only a loopback interface), a new
 * /proc and /dev, the system directories read-only, a private tmpfs /tmp, home, /dev/shm and
 * secrets directory, and the environment built from `env` alone. Nested user namespaces are
 * disabled (`--disable-userns`) and the seccomp program at `seccompFd` is applied (see
 * seccomp-filter.ts). The sandbox's PID 1 is
 * bubblewrap's reaper; killing it ends every process of the sandbox. It is deliberately not
 * tied to its parent (no --die-with-parent): a desktop outlives a worker restart and is
 * adopted or stopped through its session directory.
 */
export function bwrapOptions(spec: SandboxSpec): string[] {
  // An explicit user namespace, so that --disable-userns can forbid nested ones.
  const args = ['--unshare-all', '--unshare-user', '--disable-userns'];
  // The launcher's namespace is the egress link's: owned by the host's user namespace, so
  // nothing inside (no capability there) can change its addresses, routes or filters.
  if (spec.resolvConfFd !== undefined) args.push('--share-net');
  args.push('--uid', String(SANDBOX_USER.uid));
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
  args.push('--ro-bind-data', String(spec.passwdFd), '/etc/passwd');
  args.push('--ro-bind-data', String(spec.groupFd), '/etc/group');
  // Unreadable to the sandbox user anyway; hidden all the same.
  for (const secret of ['/etc/shadow', '/etc/gshadow', '/etc/sudoers'])
    if (existsSync(secret)) args.push('--ro-bind', '/dev/null', secret);
  if (spec.resolvConfFd !== undefined)
    args.push('--ro-bind-data', String(spec.resolvConfFd), '/etc/resolv.conf');
  if (spec.caBundleFd !== undefined)
    args.push('--ro-bind-data', String(spec.caBundleFd), '/etc/ssl/certs/ca-certificates.crt');
  if (spec.egressCaFd !== undefined)
    args.push('--ro-bind-data', String(spec.egressCaFd), EGRESS_CA_PATH);
  args.push('--ro-bind-try', '/var/cache/fontconfig', '/var/cache/fontconfig');
  args.push('--proc', '/proc', '--dev', '/dev');
  const tmpfs = (path: string, bytes: number, perms = '1777') =>
    args.push('--perms', perms, '--size', String(bytes), '--tmpfs', path);
  const sizes = tmpfsBytes(spec.memoryMb);
  tmpfs('/tmp', sizes.tmp);
  tmpfs('/dev/shm', sizes.shm);
  tmpfs('/var/tmp', sizes.tmp);
  tmpfs(SANDBOX_PATHS.home, sizes.home, '0700');
  tmpfs(SANDBOX_PATHS.secrets, sizes.secrets, '0700');
  for (const mount of spec.code) args.push('--ro-bind', mount.host, mount.sandbox);
  if (spec.hostStage !== undefined) args.push('--ro-bind', spec.hostStage, HOST_STAGE_DIR);
  args.push('--chdir', SANDBOX_PATHS.home, '--clearenv');
  for (const [name, value] of Object.entries(spec.env)) args.push('--setenv', name, value);
  // Node keeps its own roots (not the system bundle); this adds the egress CA for Node programs.
  if (spec.egressCaFd !== undefined) args.push('--setenv', 'NODE_EXTRA_CA_CERTS', EGRESS_CA_PATH);
  args.push('--info-fd', String(spec.infoFd));
  if (spec.seccompFd !== null) args.push('--seccomp', String(spec.seccompFd));
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
