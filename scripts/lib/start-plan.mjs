// What `npm start` runs, in order (start.mjs supervises it): the embedded servers, migrations,
// keys, the worker (root when we are: it makes sandboxes), the API and the dashboard (as the
// `cubicle` user when we are root), each with its own allow-listed environment.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PortInUseError, spawnApp, waitHealthy } from './api-process.mjs';
import { egressRelayLink } from '../tools/egress-relay/tool.mjs';
import { appEnv } from './app-env.mjs';
import { ensureDatabase, migrateDatabase } from './data.mjs';
import { ensureDefaultTenant, ensureKeyring, ensureViewerKeys } from './first-run.mjs';
import { portInUseMessage, portOwner } from './port-owner.mjs';
import { stopInstallationDesktops } from './stop-desktops.mjs';
import { UserError } from './ui.mjs';

/**
 * START_PLAN is what `npm start` runs, in order; processes stop in reverse. A `process` entry
 * returns a handle (pid, exited, stop, logTail) and may publish env for the entries after it;
 * with `restart`, a crash starts it again (its `start` runs again). A `task` runs once; an
 * `on-stop` entry runs when the stack stops, after the entries that follow it have stopped.
 */
export const START_PLAN = [
  {
    kind: 'process',
    name: 'postgres',
    isExternal: (ctx) => Boolean(ctx.env.DATABASE_URL),
    start: async (ctx) => {
      const dataDir = join(ctx.dataRoot, 'postgres');
      // Its password: .cubicle/postgres.password. With an unprivileged API, the socket moves to
      // .cubicle/postgres-socket (mode 0710, the API's group): the data directory stays closed.
      const server = await ctx.embedded.startPostgres({
        dataDir,
        ifRunning: 'restart',
        log: ctx.log,
        socketGid: ctx.appUser?.gid,
      });
      ctx.env.DATABASE_URL = server.url('cubicle');
      ctx.where.push(`postgres ${server.dataDir} (log: postgres.log there)`);
      return server;
    },
  },
  {
    kind: 'task',
    name: 'migrations',
    run: async (ctx) => {
      await ensureDatabase(ctx.root, ctx.env.DATABASE_URL, ctx.log);
      await migrateDatabase(ctx.root, ctx.env.DATABASE_URL, ctx.log);
    },
  },
  {
    kind: 'process',
    name: 'redis',
    isExternal: (ctx) => Boolean(ctx.env.REDIS_URL),
    start: async (ctx) => {
      const dir = join(ctx.dataRoot, 'redis');
      // AOF so jobs queued before a restart are still there after it. The dashboard logs in as
      // `web`: its session keys and GET/SET/DEL only, so it cannot queue a job for the worker.
      const server = await ctx.embedded.startRedis({
        dir,
        persistence: 'aof',
        ifRunning: 'restart',
        log: ctx.log,
        socketGid: ctx.appUser?.gid,
        users: [
          {
            name: 'web',
            keyPattern: `${ctx.env.CUBICLE_WEB_REDIS_PREFIX || 'cubicle:web:'}*`,
            commands: ['get', 'set', 'del', 'info'],
          },
        ],
      });
      ctx.env.REDIS_URL = server.url;
      ctx.webRedisUrl = server.urlFor('web');
      ctx.where.push(`redis    ${server.dir} (log: redis.log there)`);
      return server;
    },
  },
  {
    kind: 'task',
    name: 'keyring',
    run: async (ctx) => {
      ensureKeyring(ctx);
      await ensureViewerKeys(ctx);
    },
  },
  {
    kind: 'task',
    name: 'object store',
    // The embedded default keeps objects (profiles, snapshots, recordings) under
    // .cubicle/objects. The worker (root) and an unprivileged API share it through the API's
    // group: the directory is setgid and group-writable, and the fs store then makes what it
    // writes group-readable and -writable too (fs-store.ts). An operator's own choice stays.
    run: async (ctx) => {
      if ((ctx.env.CUBICLE_OBJECT_STORE ?? 'fs') !== 'fs' || ctx.env.CUBICLE_OBJECT_STORE_DIR)
        return;
      const dir = join(ctx.dataRoot, 'objects');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (ctx.appUser) {
        chownSync(dir, 0, ctx.appUser.gid);
        chmodSync(dir, 0o2770);
      }
      ctx.env.CUBICLE_OBJECT_STORE_DIR = dir;
      ctx.where.push(`objects  ${dir}`);
    },
  },
  {
    kind: 'on-stop',
    name: 'desktops of this installation',
    // After the worker stopped: desktops it never stopped (started by a crashed worker, adopted
    // after one) would outlive the stack; the local backend lists them by this installation's
    // scope.
    isWanted: (ctx) => (ctx.env.CUBICLE_BACKENDS ?? 'local').split(',').includes('local'),
    stop: async (ctx) => {
      const stopped = await stopInstallationDesktops(ctx.root, ctx.env.DATABASE_URL);
      ctx.log(stopped === 0 ? 'no desktop left' : `stopped ${stopped} desktop(s)`);
    },
  },
  {
    kind: 'process',
    name: 'worker',
    restart: true,
    start: async (ctx) => {
      const worker = spawnApp({
        root: ctx.root,
        name: 'worker',
        entry: 'apps/worker/dist/main.js',
        logDir: join(ctx.dataRoot, 'logs'),
        embedded: ctx.embedded,
        env: appEnv('worker', {
          ...ctx.env,
          CUBICLE_BACKENDS: ctx.env.CUBICLE_BACKENDS ?? 'local',
          LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
          // The API's group may connect to the sandboxes' guest and VNC sockets.
          CUBICLE_SANDBOX_SOCKET_GID: ctx.appUser ? String(ctx.appUser.gid) : undefined,
          // The relay the bootstrap built, where it built it: the worker's own default is
          // ~/.cache, which misses a relay built under another XDG_CACHE_HOME.
          CUBICLE_EGRESS_RELAY: ctx.env.CUBICLE_EGRESS_RELAY ?? builtRelay(),
        }),
      });
      ctx.reaper.watch(worker);
      noteWhere(ctx, `worker   ${worker.logFile}`);
      return worker;
    },
  },
  {
    kind: 'process',
    name: 'api',
    restart: true,
    start: async (ctx) => {
      const port = ctx.env.API_PORT ?? ctx.env.PORT ?? '8080';
      assertPortFree(port, 'API_PORT');
      const app = spawnApp({
        root: ctx.root,
        name: 'api',
        entry: 'apps/api/dist/main.js',
        logDir: join(ctx.dataRoot, 'logs'),
        embedded: ctx.embedded,
        user: ctx.appUser,
        env: appEnv(
          'api',
          {
            ...ctx.env,
            API_HOST: '127.0.0.1',
            API_PORT: port,
            // Where browsers open viewer streams (introspection's stream_url), whichever URL the
            // web app used to ask.
            CUBICLE_PUBLIC_API_URL: ctx.env.CUBICLE_PUBLIC_API_URL ?? `http://127.0.0.1:${port}`,
            LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
          },
          { home: ctx.appUser?.home },
        ),
      });
      ctx.reaper.watch(app);
      await waitOurs(app, `http://127.0.0.1:${port}/healthz`, 30_000, {
        what: 'the API',
        port,
        variable: 'API_PORT',
      });
      ctx.apiUrl = `http://127.0.0.1:${port}`;
      noteWhere(ctx, `api      ${app.logFile}`);
      return app;
    },
  },
  {
    kind: 'process',
    name: 'web',
    restart: true,
    start: async (ctx) => {
      const port = ctx.env.WEB_PORT ?? '3000';
      assertPortFree(port, 'WEB_PORT');
      const web = spawnApp({
        root: ctx.root,
        name: 'web',
        entry: 'node_modules/next/dist/bin/next',
        args: ['start', 'apps/web', '-H', '127.0.0.1', '-p', port],
        logDir: join(ctx.dataRoot, 'logs'),
        embedded: ctx.embedded,
        user: ctx.appUser,
        env: appEnv(
          'web',
          {
            ...ctx.env,
            NODE_ENV: 'production',
            NEXT_TELEMETRY_DISABLED: '1',
            CUBICLE_API_URL: ctx.apiUrl,
            REDIS_URL: ctx.webRedisUrl ?? ctx.env.REDIS_URL,
            CUBICLE_WEB_SESSION_SECRET: webSessionSecret(ctx),
          },
          { home: ctx.appUser?.home },
        ),
      });
      ctx.reaper.watch(web);
      await waitOurs(web, `http://127.0.0.1:${port}/login`, 60_000, {
        what: 'the web app',
        port,
        variable: 'WEB_PORT',
      });
      noteWhere(ctx, `web      ${web.logFile}`);
      return web;
    },
  },
  {
    kind: 'task',
    name: 'default tenant, key and pool',
    run: async (ctx) => ensureDefaultTenant(ctx),
  },
];

/** noteWhere adds a line to the "where things are" list once (a restarted app adds it again). */
function noteWhere(ctx, line) {
  if (!ctx.where.includes(line)) ctx.where.push(line);
}

/** assertPortFree fails with who holds `port` when another process listens on it. */
function assertPortFree(port, variable) {
  const owner = portOwner(port);
  if (owner) throw new UserError(portInUseMessage(port, owner, variable));
}

/**
 * waitOurs waits until the app just started answers `url` itself (the listener on `port` is in
 * its process group); otherwise it stops the app and says why, naming the port's holder when
 * another process took the port.
 */
async function waitOurs(app, url, timeoutMs, { what, port, variable }) {
  try {
    await waitHealthy(url, app.exited, timeoutMs, { port, pid: app.pid, variable });
  } catch (error) {
    await app.stop();
    if (error instanceof PortInUseError) throw new UserError(error.message);
    const owner = portOwner(port);
    if (owner)
      throw new UserError(`${what} did not come up: ${portInUseMessage(port, owner, variable)}`);
    throw new UserError(`${what} did not come up: ${error.message}`);
  }
}

/**
 * webSessionSecret is the key that seals dashboard sessions in Redis: from the environment, or
 * .cubicle/web-session-secret (made on first run), so sessions survive a restart.
 */
function webSessionSecret(ctx) {
  if (ctx.env.CUBICLE_WEB_SESSION_SECRET) return ctx.env.CUBICLE_WEB_SESSION_SECRET;
  const file = join(ctx.dataRoot, 'web-session-secret');
  if (!existsSync(file))
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** builtRelay names the egress relay `npm start` built (egressRelayLink), or undefined when none was. */
function builtRelay() {
  const link = egressRelayLink();
  return existsSync(link) ? link : undefined;
}
