// The built dashboard (apps/web, `next start`) against a bench's stack: the live view's first
// frame (bench:viewer) and the replay page's (bench:recording) are measured through it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** isWebBuilt: `npm run build` has produced the dashboard's production build. */
export const isWebBuilt = () => existsSync(join(root, 'apps/web/.next/BUILD_ID'));

/** freePort answers a loopback TCP port free a moment ago. */
export async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * startWeb runs `next start` of the built dashboard against the bench's API (`stack.url`, its
 * Redis for sessions) on a free loopback port and waits until /login answers. Answers its `url`
 * and `stop()` (SIGTERM, awaited). Throws when the dashboard is not built, or with the app's
 * last stderr when it never answers.
 */
export async function startWeb(stack) {
  if (!isWebBuilt()) throw new Error('apps/web is not built: run `npm run build` first');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    [join(root, 'node_modules/next/dist/bin/next'), 'start', '-H', '127.0.0.1', '-p', String(port)],
    {
      cwd: join(root, 'apps/web'),
      env: {
        ...process.env,
        NODE_ENV: 'production',
        NEXT_TELEMETRY_DISABLED: '1',
        CUBICLE_API_URL: stack.url,
        CUBICLE_WEB_URL: url,
        REDIS_URL: stack.redisUrl,
        CUBICLE_WEB_REDIS_PREFIX: 'bench:web:',
        CUBICLE_WEB_SESSION_SECRET: randomBytes(32).toString('base64'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let tail = '';
  child.stderr.on('data', (d) => (tail = (tail + d).slice(-2000)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  };
  await stack
    .waitFor(
      async () => (await fetch(`${url}/login`).catch(() => null))?.ok === true,
      60_000,
      'the web app',
    )
    .catch(async (error) => {
      await stop();
      throw new Error(`${error.message}: ${tail}`);
    });
  return { url, stop };
}
