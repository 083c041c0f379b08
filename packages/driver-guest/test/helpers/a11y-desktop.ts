/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// A desktop with the AT-SPI bus (startDesktop, no daemon) plus the guest app built in-process,
// and a GTK3 test app driven over stdin, for the a11y suites, demo and benches.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { startDesktop, type DesktopSession } from '../../src/desktop/start-desktop.js';
import { buildGuestApp } from '../../src/server/app.js';

const run = promisify(execFile);
export const TOKEN = 'a11y-test-token-0123456789abcdef0123456789';
export const GTK_APP = fileURLToPath(new URL('../fixtures/gtk-test-app.py', import.meta.url));

export interface A11yDesktopHarness {
  session: DesktopSession;
  app: FastifyInstance;
  call(url: string, body: unknown): Promise<{ status: number; json: any }>;
  stop(): Promise<void>;
}

export async function startA11yHarness(): Promise<A11yDesktopHarness> {
  const session = await startDesktop({ daemon: 'none' });
  try {
    const app = await buildGuestApp({
      token: TOKEN,
      display: session.display,
      sessionBusAddress: session.dbusAddress,
      childEnv: session.env,
      maxFileBytes: 1 << 20,
      vncPort: () => null,
    });
    const call = async (url: string, body: unknown) => {
      const res = await app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${TOKEN}` },
        payload: body as object,
      });
      return { status: res.statusCode, json: res.json() };
    };
    return {
      session,
      app,
      call,
      async stop() {
        await app.close();
        await session.stop();
      },
    };
  } catch (err) {
    await session.stop();
    throw err;
  }
}

export interface GtkApp {
  pid: number;
  windowId: number;
  lines: string[];
  /** send runs one stdin command and resolves when the app answered "DONE <cmd>". */
  send(command: string): Promise<void>;
  waitForLine(match: RegExp, ms?: number): Promise<string>;
  stop(): Promise<void>;
}

/** launchGtkApp starts the GTK3 fixture with N list items and finds its window by title. */
export async function launchGtkApp(
  session: DesktopSession,
  items: number,
  title: string,
  argv: string[] = [GTK_APP, String(items), title],
): Promise<GtkApp> {
  const child: ChildProcessWithoutNullStreams = spawn('/usr/bin/python3', argv, {
    env: session.env,
    detached: true,
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
    for (const w of waiters) w();
  });
  child.stderr.resume();
  const waitForLine = (match: RegExp, ms = 20_000, from = 0) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const hit = lines.slice(from).find((l) => match.test(l));
        if (hit !== undefined) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${match} (got ${lines.slice(-5).join(' | ')})`));
      }, ms);
      waiters.add(check);
      check();
    });
  const stop = async () => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  try {
    await waitForLine(/^READY$/);
    const windowId = await findWindowByPid(session, child.pid as number);
    // READY is printed before the first frame; GTK maps widgets (sets `showing`) silently then.
    await new Promise((r) => setTimeout(r, 300));
    return {
      pid: child.pid as number,
      windowId,
      lines,
      waitForLine,
      async send(command) {
        const from = lines.length;
        child.stdin.write(`${command}\n`);
        await waitForLine(new RegExp(`^DONE ${command.split(' ')[0]}$`), 10_000, from);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** findWindowByPid waits for a managed top-level window of the pid (xdotool reads _NET_WM_PID). */
export async function findWindowByPid(session: DesktopSession, pid: number): Promise<number> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const out = await run('xdotool', ['search', '--onlyvisible', '--pid', String(pid)], {
      env: session.env,
    }).catch(() => ({ stdout: '' }));
    const ids = out.stdout.trim().split('\n').filter(Boolean).map(Number);
    if (ids.length > 0) return ids[ids.length - 1] as number;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no window for pid ${pid}`);
}
