// The shape of a desktop session, shared by its two launchers: startDesktop (start-desktop.ts)
// and, for `daemon: 'sandbox'`, startSandboxedDesktop (start-sandbox.ts), which startDesktop
// calls. Types only, so neither launcher imports the other's module for them.
import type { GuestTokenDigest } from '../server/auth.js';

/** A network namespace to run a sandbox in, and its resolv.conf (see DesktopOptions.network). */
export interface SandboxNetworkOptions {
  netnsPath: string;
  resolvConf: string;
  /**
   * The sandbox's CA bundle (the system's plus Cubicle's egress CA, for hosts whose credentials
   * are injected at egress), bound over /etc/ssl/certs/ca-certificates.crt.
   */
  caBundle?: string;
  /**
   * Cubicle's egress CA alone (PEM), bound at EGRESS_CA_PATH: Node reads it (NODE_EXTRA_CA_CERTS)
   * and the browsers' NSS databases are given it when their profiles are prepared.
   */
  egressCa?: string;
}

export interface DesktopOptions {
  width?: number;
  height?: number;
  depth?: 16 | 24;
  /** Keep Xvfb's GLX extension (costs ~60 MB RSS); off by default. */
  withGlx?: boolean;
  /**
   * Where the guest driver runs: `in-process` (this Node process; cheapest), `child` (a separate
   * `node dist/main.js`, as in a sandbox image; needs the package built), `none`, or `sandbox`:
   * the whole desktop, daemon included, in its own bubblewrap sandbox (start-sandbox.ts), reached
   * through unix sockets (`guestUrl` http+unix://…, `vncSocket`).
   */
  daemon?: 'in-process' | 'child' | 'none' | 'sandbox';
  /**
   * In-process daemon: listen on this unix socket instead of `listenHost`:`guestPort`, a path or
   * the descriptor of a bound socket (a sandbox's, handed in by its launcher).
   */
  guestSocket?: string | { fd: number };
  /** In-process daemon: authenticate with the token's SHA-256 only (it never holds the token). */
  guestTokenDigest?: GuestTokenDigest;
  /**
   * Tag every process with the session marker (CUBICLE_DESKTOP_ID) so stop() and
   * stopDesktopById find escaped ones; true by default. Inside a sandbox its PID namespace
   * bounds the session instead, and the apps' environment carries nothing of Cubicle's.
   */
  markProcesses?: boolean;
  /** Driver port on `listenHost`; a free one by default. */
  guestPort?: number;
  /**
   * The local address the guest driver and the VNC port listen on, such as a simulated pod's
   * own loopback IP (127.x.y.z); 127.0.0.1 by default.
   */
  listenHost?: string;
  /** The VNC port viewers connect to on `listenHost`; a free one by default. */
  vncPort?: number;
  /**
   * A sandboxed desktop's guest and VNC sockets belong to this group (mode 0660) so an API
   * process that is not root but in the group can connect; owner-only (0600) when unset.
   */
  socketGid?: number;
  /** Serve VNC viewers on this unix socket too (a sandboxed desktop's way out): path or descriptor. */
  vncSocket?: string | { fd: number };
  /** Driver token; a random 64-character one by default. */
  guestToken?: string;
  /** Environment the session starts from; the caller's own by default. */
  baseEnv?: Record<string, string | undefined>;
  /**
   * The session id (its process marker). Give a stable one, such as a sandbox id, to find and
   * stop the session later from another process with stopDesktopById; random by default.
   */
  id?: string;
  /** Extra environment for the apps of the session (a pool's non-secret env); session variables win. */
  appEnv?: Record<string, string>;
  /**
   * A sandboxed desktop's cpu (thousandths of a core) and memory, applied through its own
   * cgroup (sandbox-cgroup.ts); a pool's defaults (1 core, 2048 MiB) when not given.
   */
  limits?: { cpuMillis: number; memoryMb: number };
  /**
   * The sandbox's network (sandbox mode, as root): a network namespace Cubicle made with a link
   * to its egress point (@cubicle/egress attach), joined instead of a namespace of loopback
   * only, and the resolv.conf naming the egress resolver. Without it: loopback only.
   */
  network?: SandboxNetworkOptions;
}

export interface DesktopPids {
  xvfb: number;
  sessionBus: number;
  windowManager: number;
  /** null until the first VNC viewer (x11vnc starts on demand). */
  x11vnc: number | null;
  /** The child daemon, or this process for an in-process daemon, or null. */
  daemon: number | null;
}

export interface DesktopSession {
  id: string;
  display: string;
  dbusAddress: string;
  a11yBusAddress: string;
  /** The VNC port on `vncHost`, served while the session lives (x11vnc starts on demand). */
  vncPort: number;
  /** The address of the VNC port and the guest driver (127.0.0.1 unless `listenHost` was given). */
  vncHost: string;
  guestUrl: string | null;
  guestToken: string;
  /** A sandboxed session's VNC socket on this machine (its vncPort is inside the sandbox). */
  vncSocket?: string;
  /** A sandboxed session: its PID 1 on this machine and its host uid (null: our own, mapped). */
  sandbox?: { initPid: number; hostUid: number | null };
  readonly pids: DesktopPids;
  /** Environment for launching apps into this desktop (they are stopped with it). */
  env: Record<string, string>;
  /** Wall-clock start-up time. */
  startMs: number;
  /** Every live process of the session right now (escaped a11y processes included). */
  listProcesses(): Promise<number[]>;
  /** stop ends every process of the session and removes its directory; idempotent. */
  stop(): Promise<void>;
}
