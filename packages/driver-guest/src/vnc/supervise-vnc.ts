import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { canConnect } from '../server/probe-desktop.js';

/** freeLocalPort asks the kernel for an unused port on `host` (free now, not reserved). */
export function freeLocalPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface VncOptions {
  display: string;
  /** Environment for x11vnc (the session's, so its pid is found with the rest of the desktop). */
  env: Record<string, string | undefined>;
  /** A fixed port; by default a free one is picked (and re-picked if someone takes it). */
  port?: number;
  /**
   * The one local address x11vnc listens on (`-listen`), such as a simulated pod's own loopback
   * IP; by default `-localhost` (127.0.0.1).
   */
  host?: string;
  /** Where x11vnc logs; nothing is logged without it. */
  logFile?: string;
  startTimeoutMs?: number;
}

export interface VncSupervisor {
  /** The localhost port while x11vnc accepts connections, else null. */
  port(): number | null;
  pid(): number | null;
  /** How many times x11vnc was restarted after dying. */
  restarts(): number;
  stop(): Promise<void>;
}

const RESTART_BACKOFF_MS = [100, 250, 500, 1000, 2000];

/**
 * superviseVnc keeps one x11vnc serving the display on localhost only: no password (only local
 * processes, i.e. our stream proxy, can reach it), shared, never exiting on client disconnect.
 * If it dies it is restarted with a growing backoff; if the port was taken meanwhile, a new one
 * is picked. Resolves once the first instance accepts connections.
 */
export async function superviseVnc(options: VncOptions): Promise<VncSupervisor> {
  let child: ChildProcess | null = null;
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? (await freeLocalPort(host));
  let isUp = false;
  let isStopping = false;
  let restarts = 0;
  let hasStarted = false;

  const launch = async (): Promise<boolean> => {
    const listen = options.host === undefined ? ['-localhost'] : ['-listen', options.host];
    const args = ['-display', options.display, ...listen, '-rfbport', String(port)];
    // -noshm: x11vnc's MIT-SHM segments outlive it when it is killed (SysV shm is not freed with
    // the process), and a machine that starts and kills many desktops runs out of segments
    // (kernel.shmmni) until nothing, Postgres included, can allocate one. Reading the
    // framebuffer without SHM costs a little CPU per update, only while a viewer watches.
    args.push('-nopw', '-forever', '-shared', '-noxdamage', '-noshm', '-quiet');
    if (options.logFile) args.push('-o', options.logFile);
    const proc = spawn('x11vnc', args, { env: options.env, detached: true, stdio: 'ignore' });
    child = proc;
    proc.once('error', () => undefined);
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      isUp = false;
      if (child === proc) child = null;
      // Supervision begins once the first instance served; start-up failures are retried below.
      if (hasStarted && !isStopping) void relaunch();
    });
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    while (Date.now() < deadline && !exited && !isStopping) {
      if (await canConnect({ host, port }, 200)) {
        isUp = true;
        return true;
      }
      await sleep(30);
    }
    return false;
  };

  const relaunch = async () => {
    const delay = RESTART_BACKOFF_MS[Math.min(restarts, RESTART_BACKOFF_MS.length - 1)] ?? 2000;
    restarts += 1;
    await sleep(delay);
    if (isStopping) return;
    // Someone else may have bound our port while x11vnc was down.
    if (!options.port && (await canConnect({ host, port }, 200))) port = await freeLocalPort(host);
    await launch();
  };

  const stop = async () => {
    isStopping = true;
    isUp = false;
    const proc = child;
    if (!proc?.pid || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    try {
      process.kill(-proc.pid, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 1500);
    await gone;
    clearTimeout(timer);
  };

  for (let attempt = 0; !(await launch()); attempt += 1) {
    await stop();
    if (attempt === 2 || options.port) {
      throw new Error(`x11vnc did not start on port ${port} for display ${options.display}`);
    }
    isStopping = false;
    port = await freeLocalPort(host);
  }
  hasStarted = true;
  return {
    port: () => (isUp ? port : null),
    pid: () => child?.pid ?? null,
    restarts: () => restarts,
    stop,
  };
}
