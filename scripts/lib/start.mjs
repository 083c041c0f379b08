// `npm start`: the embedded services and the apps, supervised. Ctrl-C or SIGTERM stops them in
// reverse order. A crashed worker, API or web app is restarted with backoff (supervise.mjs);
// if it crash-loops, or an embedded server dies, the rest are stopped and we exit non-zero with
// its last log lines.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PortInUseError, spawnApp, waitHealthy } from './api-process.mjs';
import { ensureDatabase, loadEmbedded, migrateDatabase } from './data.mjs';
import { ensureDefaultTenant, ensureKeyring, ensureViewerKeys } from './first-run.mjs';
import { acquireLock, currentHolder } from './lock.mjs';
import { portInUseMessage, portOwner } from './port-owner.mjs';
import { stopInstallationDesktops } from './stop-desktops.mjs';
import { superviseProcess } from './supervise.mjs';
import { bold, dim, formatMs, red, say, step, UserError } from './ui.mjs';

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
      const server = await ctx.embedded.startPostgres({
        dataDir,
        ifRunning: 'restart',
        log: ctx.log,
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
      // AOF so jobs queued before a restart are still there after it.
      const server = await ctx.embedded.startRedis({
        dir,
        persistence: 'aof',
        ifRunning: 'restart',
        log: ctx.log,
      });
      ctx.env.REDIS_URL = server.url;
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
        env: {
          ...ctx.env,
          CUBICLE_BACKENDS: ctx.env.CUBICLE_BACKENDS ?? 'local',
          LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
        },
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
        env: {
          ...ctx.env,
          API_HOST: '127.0.0.1',
          API_PORT: port,
          // Where browsers open viewer streams (introspection's stream_url), whichever URL the
          // web app used to ask.
          CUBICLE_PUBLIC_API_URL: ctx.env.CUBICLE_PUBLIC_API_URL ?? `http://127.0.0.1:${port}`,
          LOG_LEVEL: ctx.env.LOG_LEVEL ?? 'info',
        },
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
        env: {
          ...ctx.env,
          NODE_ENV: 'production',
          NEXT_TELEMETRY_DISABLED: '1',
          CUBICLE_API_URL: ctx.apiUrl,
          CUBICLE_WEB_SESSION_SECRET: webSessionSecret(ctx),
        },
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

/** startCubicle runs START_PLAN and supervises it until a signal or a crash; it resolves with the exit code. */
export async function startCubicle(root) {
  const dataRoot = join(root, '.cubicle');
  const holder = currentHolder(dataRoot);
  if (holder) {
    throw new UserError(
      `Cubicle already runs from this checkout (pid ${holder.pid}, ${holder.command}); stop it first`,
    );
  }
  const releaseLock = acquireLock(dataRoot, 'npm start');
  const embedded = await loadEmbedded(root);
  const reaper = embedded.startReaper();
  const ctx = {
    root,
    dataRoot,
    embedded,
    reaper,
    env: { ...process.env },
    where: [],
    log: (line) => say(dim(line)),
  };
  // The API writes viewer links to the web app (viewer_url), the web app calls the API: one place
  // decides both addresses.
  ctx.env.CUBICLE_WEB_URL ??= `http://127.0.0.1:${ctx.env.WEB_PORT ?? '3000'}`;
  const running = [];
  let phase = 'starting';
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));
  let pendingStop;

  const shutdown = async (code) => {
    phase = 'stopping';
    for (const { name, handle } of [...running].reverse()) {
      await step(`stop ${name}`, () => handle.stop()).catch((error) => say(red(error.message)));
      if (handle.pid !== undefined) reaper.unwatch(handle.pid);
    }
    releaseLock();
    reaper.close();
    resolveDone(code);
  };
  const requestStop = (code) => {
    if (phase === 'stopping') return say('still stopping…');
    if (phase === 'starting') {
      pendingStop ??= code;
      return say('stopping once the current step is done…');
    }
    void shutdown(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      say(`${signal}: stopping`);
      requestStop(0);
    });
  }
  const supervise = (entry, first) => {
    const { name } = entry;
    if (entry.restart) {
      const handle = superviseProcess({
        name,
        first,
        start: () => entry.start(ctx),
        log: (line) => say(line.startsWith('✗') ? red(line) : line),
        onRestart: (next) => reaper.watch(next),
        onGiveUp: () => requestStop(1),
      });
      running.push({ name, handle });
      return;
    }
    const handle = first;
    running.push({ name, handle });
    reaper.watch(handle);
    void handle.exited.then((exit) => {
      if (phase === 'stopping') return;
      say(
        red(
          `✗ ${name} (pid ${handle.pid}) exited unexpectedly (code ${exit.code}, signal ${exit.signal}); last lines:`,
        ),
      );
      for (const line of handle.logTail(20)) console.log(`  ${line}`);
      requestStop(1);
    });
  };

  const started = performance.now();
  try {
    for (const entry of START_PLAN) {
      if (pendingStop !== undefined) break;
      if (entry.kind === 'task') {
        await step(entry.name, () => entry.run(ctx));
      } else if (entry.kind === 'on-stop') {
        if (entry.isWanted?.(ctx) ?? true)
          running.push({ name: entry.name, handle: { stop: () => entry.stop(ctx) } });
      } else if (entry.isExternal?.(ctx)) {
        say(`${entry.name}: using the one from the environment`);
      } else {
        supervise(entry, await step(`start ${entry.name}`, () => entry.start(ctx)));
      }
    }
  } catch (error) {
    say(red(error.message));
    pendingStop = 1;
  }
  if (pendingStop !== undefined) {
    await shutdown(pendingStop);
    return done;
  }
  phase = 'running';
  printRunning(ctx, performance.now() - started);
  const keepAlive = setInterval(() => {}, 1 << 30);
  const code = await done;
  clearInterval(keepAlive);
  return code;
}

function printRunning(ctx, ms) {
  say();
  say(bold(`Cubicle is up (services started in ${formatMs(ms)})`));
  say(`  Web    ${ctx.env.CUBICLE_WEB_URL}   (dashboard: sign in with the key below)`);
  say(`  API    ${ctx.apiUrl}   (OpenAPI: ${ctx.apiUrl}/docs)`);
  // Metrics name tenants and pools, so they are off the API port; on a loopback port when asked.
  if (ctx.env.API_METRICS_PORT)
    say(`  Metrics http://127.0.0.1:${ctx.env.API_METRICS_PORT}/metrics   (Prometheus)`);
  say(`  Key    ${ctx.adminKey}   (admin of tenant "default"; also in .cubicle/admin-key)`);
  say(`  Pool   default (2 warm desktops; watch them come up: GET /v1/pools/default)`);
  say();
  say(bold('  Claim a desktop, look at it, release it:'));
  say(`    export CUBICLE_KEY=$(cat ${join(ctx.dataRoot, 'admin-key')})`);
  say(
    `    curl -s -X POST -H "Authorization: Bearer $CUBICLE_KEY" -H 'content-type: application/json' \\`,
  );
  say(`      -d '{"wait_seconds":60}' ${ctx.apiUrl}/v1/pools/default/claims | tee claim.json`);
  say(`    CLAIM=$(node -p 'require("./claim.json").id')`);
  say(
    `    curl -s -H "Authorization: Bearer $CUBICLE_KEY" ${ctx.apiUrl}/v1/claims/$CLAIM/screenshot -o desktop.png`,
  );
  say(
    `    curl -s -X DELETE -H "Authorization: Bearer $CUBICLE_KEY" ${ctx.apiUrl}/v1/claims/$CLAIM`,
  );
  say();
  say(`  Data   ${ctx.dataRoot}`);
  for (const line of ctx.where) say(`           ${line}`);
  say(`  Stop   Ctrl-C here, or kill -TERM ${process.pid}`);
  say();
}
