import { readdir, readFile } from 'node:fs/promises';

/** Process names of browsers whose profile databases must be closed before a consistent copy. */
const BROWSERS = new Set([
  'chromium',
  'chrome',
  'google-chrome',
  'firefox',
  'firefox-esr',
  'firefox-bin',
]);
const QUIT_WAIT_MS = 8_000;

interface Found {
  pid: number;
  name: string;
}

/** findBrowsers lists the main processes of this user's browsers (by /proc comm). */
async function findBrowsers(): Promise<Found[]> {
  const uid = process.getuid?.();
  const found: Found[] = [];
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const comm = (await readFile(`/proc/${pid}/comm`, 'utf8')).trim();
      if (!BROWSERS.has(comm)) continue;
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const owner = /^Uid:\s+(\d+)/m.exec(status)?.[1];
      if (uid !== undefined && Number(owner) !== uid) continue;
      // Chromium's helpers (zygote, renderers) share its comm: only the process without a
      // --type= switch is the browser, and quitting it ends the rest.
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes('--type=')) continue;
      found.push({ pid, name: comm });
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** isAlive: the process exists and is not a zombie (PID 1 here may never reap it). */
async function isAlive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

async function anyAlive(found: Found[]): Promise<boolean> {
  for (const f of found) if (await isAlive(f.pid)) return true;
  return false;
}

/**
 * quiesceBrowsers asks the desktop's browsers to quit (SIGTERM: Chromium and Firefox treat it as
 * a normal quit and flush their cookie and history databases) and waits for them, up to 8 s,
 * then kills what is left (its SQLite journals make the copy recoverable, as after a power cut).
 * It answers the names of the browsers it stopped. Used before a save at release, when the
 * desktop ends anyway; a save during the claim copies live files instead (see archive.ts).
 */
export async function quiesceBrowsers(): Promise<string[]> {
  const found = await findBrowsers();
  for (const f of found) {
    try {
      process.kill(f.pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  const deadline = Date.now() + QUIT_WAIT_MS;
  while ((await anyAlive(found)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  for (const f of found) {
    if (!(await isAlive(f.pid))) continue;
    try {
      process.kill(f.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return [...new Set(found.map((f) => f.name))];
}
