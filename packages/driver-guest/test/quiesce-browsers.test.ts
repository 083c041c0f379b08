// Quitting a browser before a profile is saved keeps what it was given moments before: the real
// Chromium, launched with the sandbox's own command line (appCommand) on a private Xvfb, logs in
// to a page of this test's server (a persistent cookie), is quit by quitBrowsers a second or so
// later, and the cookie is in its Cookies database once quitBrowsers returns. Three fresh
// profiles in a row: on SIGTERM (the old quit) Chromium left the cookie out in most tries.
// Only processes this test started are signalled (browserFamilyOf its own child).
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserFamilyOf, quitBrowsers } from '../src/archive/quiesce-browsers.js';
import { spawnDetached } from '../src/desktop/spawn-detached.js';
import { startXvfb } from '../src/desktop/start-x-session.js';
import { appCommand } from '../src/windows/desktop-apps.js';

const run = promisify(execFile);

/** cookieRows reads the session cookies Chromium wrote (python3's sqlite3, as the desktop has). */
async function cookieRows(profile: string): Promise<number> {
  const { stdout } = await run('python3', [
    '-c',
    'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from cookies where name=\'session\'").fetchone()[0])',
    join(profile, 'Default', 'Cookies'),
  ]);
  return Number(stdout.trim());
}

describe('quitting Chromium before a save', () => {
  let xvfb: ChildProcess;
  let display: string;
  let server: Server;
  let loggedIn: () => void = () => undefined;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/login') {
        res.writeHead(302, { 'set-cookie': 'session=q1; Max-Age=86400; Path=/', location: '/' });
        res.end();
        return;
      }
      if (req.headers.cookie?.includes('session=q1')) loggedIn();
      res.setHeader('content-type', 'text/html').end('<title>home</title>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    ({ child: xvfb, display } = await startXvfb(
      { width: 1024, height: 768, depth: 24, withGlx: false },
      process.env,
    ));
  });
  afterAll(async () => {
    for (const c of started) if (c.exitCode === null && c.pid) process.kill(-c.pid, 'SIGKILL');
    if (xvfb?.pid) process.kill(-xvfb.pid, 'SIGKILL');
    server?.close();
  });

  for (const attempt of [1, 2, 3]) {
    it(`keeps a cookie set just before the quit (profile ${attempt} of 3)`, async () => {
      const home = await mkdtemp(join(tmpdir(), 'quiesce-home-'));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/login`;
        const { argv } = await appCommand('browser', home, url);
        const seen = new Promise<void>((r) => (loggedIn = r));
        const chromium = spawnDetached(argv[0]!, argv.slice(1), { ...process.env, DISPLAY: display });
        started.push(chromium);
        await seen; // the page came back with the cookie: Chromium holds it
        await new Promise((r) => setTimeout(r, 1_000));
        const browser = await browserFamilyOf(chromium.pid!);
        expect(browser?.name).toBe('chromium');
        const exited = new Promise((r) => chromium.once('exit', r));
        await quitBrowsers([browser!]);
        await exited;
        expect(await cookieRows(join(home, '.cubicle', 'chromium'))).toBe(1);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
