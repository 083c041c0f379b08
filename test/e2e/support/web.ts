// The real web app and a real browser for e2e suites: `next start` of the built apps/web on a
// free loopback port, and Debian's Chromium driven by playwright-core with a fresh profile.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const webDir = join(root, 'apps/web');
const nextBin = join(root, 'node_modules/next/dist/bin/next');

/** CHROMIUM is Debian's package (scripts/lib/apt.mjs, group `browser`); never a downloaded build. */
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots a person can look at after the run (test-results/ is gitignored). */
export const ARTIFACTS = join(root, 'test-results', 'web');

/** freePort asks the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface WebServer {
  url: string;
  /** The server's Redis key prefix (sessions live under `<prefix>session:`). */
  redisPrefix: string;
  output(): string;
  stop(): Promise<void>;
}

/** startWebServer runs `next start` of the built dashboard against an API at `apiUrl`. */
export async function startWebServer(opts: {
  apiUrl: string;
  redisUrl: string;
  redisPrefix: string;
}): Promise<WebServer> {
  if (!existsSync(join(webDir, '.next', 'BUILD_ID')))
    throw new Error('apps/web is not built: run `npx turbo run build --filter=@cubicle/web`');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [nextBin, 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: webDir,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      CUBICLE_API_URL: opts.apiUrl,
      CUBICLE_WEB_URL: url,
      REDIS_URL: opts.redisUrl,
      CUBICLE_WEB_REDIS_PREFIX: opts.redisPrefix,
      CUBICLE_WEB_SESSION_SECRET: randomBytes(32).toString('base64'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // Its own process group: next start may fork workers.
    process.kill(-child.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`next start exited: ${out}`);
    const ok = await fetch(`${url}/login`, { signal: AbortSignal.timeout(5_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`next start did not answer within 60 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, redisPrefix: opts.redisPrefix, output: () => out, stop };
}

export interface Browser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** launchBrowser starts headless Chromium with a fresh, throw-away profile. */
export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'cubicle-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Browser-side code is passed as source text: this package compiles without the DOM library.
const CANVAS_STATS = `(sel) => {
  const canvas = document.querySelector(sel);
  if (!canvas || canvas.width === 0 || canvas.height === 0) return null;
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let lit = 0, total = 0;
  for (let i = 0; i < data.length; i += 4 * 16) {
    total += 1;
    if (data[i] + data[i + 1] + data[i + 2] > 48) lit += 1;
  }
  return { width: canvas.width, height: canvas.height, nonBlack: lit / total };
}`;

export const VNC_CANVAS = '[data-testid=vnc] canvas';

/**
 * canvasStats samples the noVNC canvas matched by `selector`: its size (the remote framebuffer's)
 * and the share of pixels that are not (near) black. Null while there is no drawn canvas.
 */
export async function canvasStats(
  page: Page,
  selector = VNC_CANVAS,
): Promise<{ width: number; height: number; nonBlack: number } | null> {
  return page.evaluate(`(${CANVAS_STATS})(${JSON.stringify(selector)})`);
}

/** pixelSum is r+g+b of one framebuffer pixel of the noVNC canvas. */
export async function pixelSum(page: Page, x: number, y: number): Promise<number> {
  return page.evaluate(
    `(() => { const d = document.querySelector(${JSON.stringify(VNC_CANVAS)}).getContext('2d').getImageData(${x}, ${y}, 1, 1).data; return d[0] + d[1] + d[2]; })()`,
  );
}

/** browserStorage is everything the page keeps in localStorage and sessionStorage, as JSON. */
export async function browserStorage(page: Page): Promise<string> {
  return page.evaluate('JSON.stringify({ ...localStorage, ...sessionStorage })');
}

/** waitForFrame waits until the canvas shows something other than black (a drawn desktop). */
export async function waitForFrame(page: Page, selector?: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await canvasStats(page, selector);
    if (stats && stats.nonBlack > 0.01) return stats;
    if (Date.now() > deadline)
      throw new Error(`no non-black frame within ${timeoutMs} ms: ${JSON.stringify(stats)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** saveArtifact writes a page screenshot under test-results/web/ and returns its path. */
export async function saveArtifact(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}
