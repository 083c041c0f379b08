import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { inheritedEnv } from '../env.js';
import { canConnect } from '../server/probe-desktop.js';
import { serveVncOnDemand, type VncOnDemand } from '../vnc/serve-vnc-on-demand.js';
import { freeLocalPort } from '../vnc/supervise-vnc.js';
import { viewerPreambleOf, viewerPreambleOfToken } from '../vnc/viewer-preamble.js';
import { daemonNodeArgs } from './daemon-node-flags.js';
import type {
  DesktopOptions,
  DesktopPids,
  DesktopSession,
  SandboxNetworkOptions,
} from './desktop-session.js';
import { startA11yBus, type A11yBus } from './start-a11y-bus.js';
import {
  exitHooks,
  liveSessions,
  SESSION_DIR_PREFIX,
  SESSION_FILE,
  sessionDir,
  type SessionFile,
} from './session-registry.js';
import { startSandboxedDesktop } from './start-sandbox.js';
import { sessionEnv } from './session-env.js';
import { findSessionProcesses, killSession, processStartTime } from './session-processes.js';
import { spawnDetached, waitFor } from './spawn-detached.js';
import { startSessionBus, startWindowManager, startXvfb } from './start-x-session.js';

const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;
export { sessionDir, SESSION_DIR_PREFIX, SESSION_FILE, liveSessions, type SessionFile };
export type { DesktopOptions, DesktopPids, DesktopSession, SandboxNetworkOptions };

const mainScript = () => fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * startDesktop starts a complete desktop session: Xvfb on a free display, a private session
 * D-Bus that is also the AT-SPI bus (with its registry), fluxbox, a VNC port whose supervised
 * x11vnc starts with the first viewer (serve-vnc-on-demand.ts), and the guest driver. Every
 * component is its own process group, and every process carries the session's marker in its
 * environment, so stop() also finds what escaped the groups (the a11y registry is activated by
 * D-Bus, not by us).
 * On any start-up failure everything started is stopped.
 */
export async function startDesktop(options: DesktopOptions = {}): Promise<DesktopSession> {
  if (options.id !== undefined && !SESSION_ID.test(options.id))
    throw new Error('invalid desktop session id');
  if (options.daemon === 'sandbox') return startSandboxedDesktop(options);
  const started = performance.now();
  const id = options.id ?? `desk_${randomBytes(8).toString('hex')}`;
  const dir = sessionDir(id);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { mode: 0o700 });
  const runtimeDir = join(dir, 'runtime');
  await mkdir(runtimeDir, { mode: 0o700 });
  const base = { ...(options.baseEnv ?? inheritedEnv()), ...options.appEnv };
  const mark = options.markProcesses ?? true;
  const envOf = (extra: { display: string; busAddress?: string; a11yAddress?: string }) =>
    sessionEnv(base, { id, runtimeDir, mark, ...extra });
  const host = options.listenHost ?? '127.0.0.1';
  const groups = new Set<number>();
  const track = (child: ChildProcess) => {
    if (child.pid) groups.add(child.pid);
    return child;
  };
  let vnc: VncOnDemand | null = null;
  let app: FastifyInstance | null = null;
  let daemonChild: ChildProcess | null = null;
  let a11yBus: A11yBus | null = null;

  // If this process exits without stop() (a crash, process.exit in a test runner), the groups
  // still die with it (the a11y processes then lose their buses and exit on their own) and the
  // session directory goes too.
  const killGroupsOnExit = () => {
    const vncPid = vnc?.pid();
    for (const pgid of vncPid ? [...groups, vncPid] : groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  exitHooks.add(killGroupsOnExit);
  liveSessions.set(id, () => stop());

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      exitHooks.delete(killGroupsOnExit);
      liveSessions.delete(id);
      await app?.close().catch(() => undefined);
      a11yBus?.close();
      await vnc?.stop();
      await killSession(id, groups);
      await rm(dir, { recursive: true, force: true });
    })();
    return stopping;
  };

  try {
    const preEnv = envOf({ display: ':0' });
    const xvfb = await startXvfb(
      {
        width: options.width ?? 1280,
        height: options.height ?? 800,
        depth: options.depth ?? 24,
        withGlx: options.withGlx ?? false,
      },
      preEnv,
    );
    track(xvfb.child);
    const display = xvfb.display;
    const xvfbPid = xvfb.child.pid as number;
    const xvfbStart = await processStartTime(xvfbPid);
    if (xvfbStart === null) throw new Error('Xvfb exited during start-up');
    const record: SessionFile = { id, xvfb: { pid: xvfbPid, startTime: xvfbStart } };
    await writeFile(join(dir, SESSION_FILE), JSON.stringify(record), { mode: 0o600 });
    // What the session bus activates (the a11y registry) gets its environment: DISPLAY too.
    const bus = await startSessionBus(join(dir, 'bus'), envOf({ display }));
    track(bus.child);
    const env = envOf({ display, busAddress: bus.address });
    const guestToken = options.guestToken ?? randomBytes(32).toString('hex');
    // x11vnc starts with the first viewer: most desktops are driven by an agent and never watched.
    const [windowManager, a11yAddress, viewers] = await Promise.all([
      startWindowManager(display, env, dir).then(track),
      startA11yBus({ sessionBusAddress: bus.address, display }).then((started) => {
        a11yBus = started;
        return started.address;
      }),
      serveVncOnDemand({
        display,
        env,
        logFile: join(dir, 'x11vnc.log'),
        host,
        ...(options.vncPort === undefined ? {} : { port: options.vncPort }),
        ...(options.vncSocket === undefined ? {} : { socketPath: options.vncSocket }),
        // Viewers prove they hold the guest token before they get a byte (viewer-preamble.ts).
        viewerPreamble: options.guestTokenDigest
          ? viewerPreambleOf(options.guestTokenDigest.sha256)
          : viewerPreambleOfToken(guestToken),
      }).then((served) => (vnc = served)),
    ]);
    const appEnv = envOf({ display, busAddress: bus.address, a11yAddress });
    const daemonMode = options.daemon ?? 'in-process';
    let guestUrl: string | null = null;

    if (daemonMode === 'in-process') {
      // Loaded here, not at the top: a launcher whose daemon is a child (KubeVirt's unit, the
      // `child` mode) then never holds the driver's code (fastify, zod, the contract: ~20 MB).
      const { buildGuestApp } = await import('../server/app.js');
      app = await buildGuestApp({
        token: options.guestTokenDigest ?? guestToken,
        display,
        sessionBusAddress: bus.address,
        childEnv: appEnv,
        maxFileBytes: 64 * 1024 * 1024,
        vncPort: () => viewers.availablePort(),
      });
      if (typeof options.guestSocket === 'object') {
        // Fastify's listen() knows paths and ports only; the server itself takes a descriptor.
        // Its address is the launcher's to give (the path is outside this sandbox).
        const { fd } = options.guestSocket;
        await app.ready();
        await new Promise<void>((resolve, reject) => {
          app!.server.once('error', reject);
          app!.server.listen({ fd }, () => {
            app!.server.off('error', reject);
            resolve();
          });
        });
      } else if (options.guestSocket) {
        await rm(options.guestSocket, { force: true });
        await app.listen({ path: options.guestSocket });
        guestUrl = `http+unix://${encodeURIComponent(options.guestSocket)}`;
      } else {
        const url = await app.listen({ host, port: options.guestPort ?? 0 });
        guestUrl = url.replace('localhost', '127.0.0.1');
      }
    } else if (daemonMode === 'child') {
      const script = mainScript();
      if (!existsSync(script))
        throw new Error(`${script} is missing: build @cubicle/driver-guest first`);
      const port = options.guestPort ?? (await freeLocalPort(host));
      daemonChild = track(
        spawnDetached(process.execPath, daemonNodeArgs(script), {
          ...appEnv,
          GUEST_HOST: host,
          GUEST_PORT: String(port),
          GUEST_TOKEN: guestToken,
          GUEST_VNC_PORT: String(viewers.port),
          GUEST_VNC_HOST: host,
          LOG_LEVEL: 'warn',
        }),
      );
      await waitFor('the guest driver to listen', () => canConnect({ host, port }, 200), {
        child: daemonChild,
        intervalMs: 25,
      });
      guestUrl = `http://${host}:${port}`;
    }

    return {
      id,
      display,
      dbusAddress: bus.address,
      a11yBusAddress: a11yAddress,
      vncPort: viewers.port,
      vncHost: host,
      guestUrl,
      guestToken,
      get pids(): DesktopPids {
        return {
          xvfb: xvfb.child.pid as number,
          sessionBus: bus.child.pid as number,
          windowManager: windowManager.pid as number,
          x11vnc: viewers.pid(),
          daemon: daemonMode === 'in-process' ? process.pid : (daemonChild?.pid ?? null),
        };
      },
      env: Object.fromEntries(
        Object.entries(appEnv).filter((e): e is [string, string] => e[1] !== undefined),
      ),
      startMs: performance.now() - started,
      listProcesses: () => findSessionProcesses(id, groups),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
