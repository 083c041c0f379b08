import { createHash } from 'node:crypto';
import {
  vncUnixEndpoint,
  type ProvisionInput,
  type ProvisionedSandbox,
  type SandboxBackend,
} from '@cubicle/control-plane';
import {
  listDesktopIds,
  listLiveDesktopIds,
  sandboxResourceEvents,
  startDesktop,
  stopDesktopById,
  type DesktopOptions,
  type SandboxResourceEvents,
} from '@cubicle/driver-guest';
import type { LocalEgress } from './local-egress.js';
import { localFreezer } from './pause-local.js';

export interface LocalBackendOptions {
  /**
   * Which installation's desktops are ours. Several Cubicles can share one machine (a dev
   * `npm start` beside a test run): each only lists and destroys desktops of its own scope.
   */
  scope: string;
  /** Passed to every desktop (size, GLX); the desktop always runs in its own sandbox. */
  desktop?: Pick<DesktopOptions, 'width' | 'height' | 'depth' | 'withGlx'>;
  /**
   * The group of the API process when it does not run as root: the sandboxes' guest and VNC
   * sockets are made connectable by it (0660). Owner-only when unset.
   */
  socketGid?: number;
  /**
   * Sandbox egress (root only): each sandbox whose policy is not `none` gets a network
   * namespace linked to the egress point on this machine. Without it: loopback only.
   */
  egress?: LocalEgress;
}

const SANDBOX_ID = /^sbx_[0-9a-z]{26}$/;

/**
 * How often list() also reads every process's marker. The sweep lists every few seconds, and the
 * full scan reads two /proc files of every process on the machine (~0.1-0.3 s of CPU with 32
 * desktops, taken from the claims and guest calls running beside it); the session directories
 * answer in between.
 */
const FULL_SCAN_EVERY_MS = 60_000;

/** localBackendScope derives a scope from the database an installation uses (one per database). */
export function localBackendScope(databaseUrl: string): string {
  // Without the password: rotating it must not orphan the installation's desktops, and a
  // secret has no business in an identifier every desktop's processes carry.
  let identity = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    url.password = '';
    identity = url.toString();
  } catch {
    /* not a URL: the text itself names the database */
  }
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}

/** desktopIdOf is the desktop session id of a sandbox in a scope (its process marker). */
export const desktopIdOf = (scope: string, sandboxId: string) => `${scope}-${sandboxId}`;

/**
 * createLocalBackend runs each sandbox as a desktop session on this machine. The session's id is
 * derived from the sandbox id and every process of it carries that id in its environment, so the
 * backend keeps no state of its own: a restarted worker lists and destroys desktops by sandbox
 * id, and a provisioning re-run after a crash first clears whatever half-started session is
 * left. Each desktop, guest driver included, runs in its own bubblewrap sandbox (own user, mount,
 * PID, IPC and network namespaces; see startDesktop's `sandbox` mode) and is reached through
 * unix sockets in a directory this process owns. The pool's `image` is not used (the desktop
 * is this machine's, read-only); its `env` reaches the session's apps.
 */
/** The local backend, which can also say what the kernel counted of a sandbox's resources. */
export interface LocalBackend extends SandboxBackend {
  /**
   * resourceEvents reads sandbox `sandboxId`'s cgroup: `oomKills > 0` means its memory limit
   * killed processes inside it (a failure reason to record); null without a cgroup.
   */
  resourceEvents(sandboxId: string): Promise<SandboxResourceEvents | null>;
}

export function createLocalBackend(options: LocalBackendOptions): LocalBackend {
  if (!/^[a-z0-9]{1,16}$/.test(options.scope))
    throw new Error('local backend scope must be 1-16 lowercase letters or digits');
  const prefix = `${options.scope}-`;
  let lastFullScan = -Infinity;
  return {
    kind: 'local',
    async provision(input: ProvisionInput): Promise<ProvisionedSandbox> {
      const id = desktopIdOf(options.scope, input.sandboxId);
      await stopDesktopById(id);
      if (input.signal.aborted) throw new Error('provisioning aborted');
      const network = (await options.egress?.networkFor(input.sandboxId, id)) ?? null;
      const session = await startDesktop({
        ...options.desktop,
        id,
        daemon: 'sandbox',
        appEnv: input.env,
        // The pool's cpu and memory, applied through the sandbox's own cgroup.
        limits: { cpuMillis: input.cpuMillis, memoryMb: input.memoryMb },
        ...(options.socketGid === undefined ? {} : { socketGid: options.socketGid }),
        ...(network ? { network } : {}),
      }).catch(async (err: unknown) => {
        await options.egress?.release(id);
        throw err;
      });
      if (!session.guestUrl || !session.vncSocket) {
        await session.stop();
        throw new Error('the desktop started without a guest driver');
      }
      return {
        ref: session.display,
        guestUrl: session.guestUrl,
        guestToken: session.guestToken,
        vncEndpoint: vncUnixEndpoint(session.vncSocket),
        egressLink: network !== null,
      };
    },
    resourceEvents: (sandboxId: string) =>
      sandboxResourceEvents(desktopIdOf(options.scope, sandboxId)),
    // Pause freezes the sandbox's cgroup, guest driver included (pause-local.ts).
    ...localFreezer((sandboxId) => desktopIdOf(options.scope, sandboxId)),
    async destroy(sandboxId: string): Promise<void> {
      await stopDesktopById(desktopIdOf(options.scope, sandboxId));
      await options.egress?.release(desktopIdOf(options.scope, sandboxId));
    },
    async list(): Promise<string[]> {
      const ids = new Set(await listLiveDesktopIds(prefix));
      // The first call (a restarted worker) and one a minute also find processes that outlived
      // their session directory, so an orphan is destroyed even then.
      if (Date.now() - lastFullScan >= FULL_SCAN_EVERY_MS) {
        lastFullScan = Date.now();
        for (const id of await listDesktopIds()) if (id.startsWith(prefix)) ids.add(id);
      }
      // Links of desktops that outlived a worker restart are served again; orphans removed.
      await options.egress?.reconcile(ids);
      return [...ids].map((id) => id.slice(prefix.length)).filter((id) => SANDBOX_ID.test(id));
    },
  };
}
