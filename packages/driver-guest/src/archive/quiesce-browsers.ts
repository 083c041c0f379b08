import { readdir, readFile } from 'node:fs/promises';

/**
 * The signal that makes each browser run its full shutdown, by process name. Measured on this
 * Debian's Chromium, a cookie set 3-15 s before the signal: on SIGTERM the browser process is
 * gone within ~40 ms and the cookie is in the Cookies database only sometimes (0 rows in 7 of 8
 * tries on Xvfb, 1 of 2 in a sandbox); on SIGINT it exits in 100-340 ms with the cookie always
 * written (7 of 7, 2 of 2 in a sandbox). Firefox writes cookies at once, quits cleanly on
 * SIGTERM (~80 ms) and ignores SIGINT.
 */
const QUIT_SIGNAL: Record<string, NodeJS.Signals> = {
  chromium: 'SIGINT',
  chrome: 'SIGINT',
  'google-chrome': 'SIGINT',
  firefox: 'SIGTERM',
  'firefox-esr': 'SIGTERM',
  'firefox-bin': 'SIGTERM',
};
const QUIT_WAIT_MS = 8_000;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  uid: number;
}

/** processes lists this machine's (this PID namespace's) processes; ones that exit are skipped. */
async function processes(): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = await readFile(`/proc/${name}/status`, 'utf8');
      out.push({
        pid: Number(name),
        comm: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '',
        ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
        uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** A browser's main process and every process it started, as found when asked to quit. */
export interface BrowserFamily {
  pid: number;
  name: string;
  family: number[];
}

/** descendantsOf lists `pid` and every process below it in the process tree. */
function descendantsOf(pid: number, all: Proc[]): number[] {
  const children = new Map<number, number[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const family: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.pop()!;
    family.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return family;
}

/** isBrowserMain: a browser's own process, not one of Chromium's helpers that share its comm. */
async function isBrowserMain(p: Proc): Promise<boolean> {
  if (!Object.hasOwn(QUIT_SIGNAL, p.comm)) return false;
  const cmdline = await readFile(`/proc/${p.pid}/cmdline`, 'utf8').catch(() => null);
  // Chromium's zygote and renderers carry a --type= switch; quitting the browser ends them.
  return cmdline !== null && !cmdline.includes('--type=');
}

/**
 * findBrowsers lists the main processes of this user's browsers, each with its descendants:
 * Chromium's network service (a child) writes the cookie database, so the copy waits for it too.
 */
async function findBrowsers(): Promise<BrowserFamily[]> {
  const uid = process.getuid?.();
  const all = await processes();
  const found: BrowserFamily[] = [];
  for (const p of all) {
    if (p.pid === process.pid || (uid !== undefined && p.uid !== uid)) continue;
    if (await isBrowserMain(p))
      found.push({ pid: p.pid, name: p.comm, family: descendantsOf(p.pid, all) });
  }
  return found;
}

/** browserFamilyOf: the browser whose main process is `pid`, or null if it is none. */
export async function browserFamilyOf(pid: number): Promise<BrowserFamily | null> {
  const all = await processes();
  const p = all.find((q) => q.pid === pid);
  if (!p || !(await isBrowserMain(p))) return null;
  return { pid, name: p.comm, family: descendantsOf(pid, all) };
}

/** isAlive: the process exists and is not a zombie (PID 1 here may never reap it). */
async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

async function alive(pids: number[]): Promise<number[]> {
  const out: number[] = [];
  for (const pid of pids) if (await isAlive(pid)) out.push(pid);
  return out;
}

/**
 * quitBrowsers asks each browser to quit with the signal that runs its full shutdown
 * (QUIT_SIGNAL: its cookie and history databases are written and closed) and waits up to 8 s
 * for it and every process it started (helpers that outlive the main process may still be
 * writing), then kills what is left (its SQLite journals make the copy recoverable, as after a
 * power cut).
 */
export async function quitBrowsers(browsers: BrowserFamily[]): Promise<void> {
  for (const b of browsers) {
    try {
      process.kill(b.pid, QUIT_SIGNAL[b.name]);
    } catch {
      // gone already
    }
  }
  const family = browsers.flatMap((b) => b.family);
  const deadline = Date.now() + QUIT_WAIT_MS;
  while ((await alive(family)).length > 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  for (const pid of await alive(family)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * quiesceBrowsers quits every browser of this desktop's user (quitBrowsers) and answers their
 * names. Used before a save at release, when the desktop ends anyway; a save during the claim
 * copies live files instead (see scan-home.ts).
 */
export async function quiesceBrowsers(): Promise<string[]> {
  const found = await findBrowsers();
  await quitBrowsers(found);
  return [...new Set(found.map((f) => f.name))];
}
