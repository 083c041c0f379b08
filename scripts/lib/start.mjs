// `npm start`: the embedded services and the apps, supervised. Ctrl-C or SIGTERM stops them in
// reverse order. A crashed worker, API or web app is restarted with backoff (supervise.mjs);
// if it crash-loops, or an embedded server dies, the rest are stopped and we exit non-zero with
// its last log lines. Started as root, only the worker keeps root: the API and the dashboard
// run as the `cubicle` user (app-user.mjs); each process gets its own allow-listed environment
// (app-env.mjs); Postgres and Redis ask every client for the installation's password.
import { join } from 'node:path';
import { appUser } from './app-user.mjs';
import { loadEmbedded } from './data.mjs';
import { acquireLock, currentHolder } from './lock.mjs';
import { START_PLAN } from './start-plan.mjs';
import { superviseProcess } from './supervise.mjs';
import { loadTerminalFormat } from './terminal-log.mjs';
import { bold, dim, formatMs, red, say, step, UserError } from './ui.mjs';

export { START_PLAN };

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
  const log = (line) => say(dim(line));
  let user;
  try {
    user = appUser(root, { log, warn: (line) => say(bold(`warning: ${line}`)) });
  } catch (error) {
    releaseLock();
    throw error;
  }
  await loadTerminalFormat(root);
  const embedded = await loadEmbedded(root);
  const reaper = embedded.startReaper();
  const ctx = {
    root,
    dataRoot,
    embedded,
    reaper,
    env: { ...process.env },
    /** The account of the API and the dashboard; undefined: they run as we do. */
    appUser: user,
    where: [],
    log,
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
  // Sandboxes reach nothing off the desktop until the operator or a pool's `egress` says so.
  say(
    ctx.env.CUBICLE_EGRESS_DEFAULT === 'open'
      ? '  Egress open for pools without a policy (private, metadata and host ranges stay closed)'
      : '  Egress none (sandboxes reach no network); open the default pool: CUBICLE_EGRESS_DEFAULT=open npm start',
  );
  say();
  say(bold('  Claim a desktop, look at it, release it:'));
  // The names the SDKs and the CLI read, so the same two lines serve curl, `npx cubicle` and code.
  say(`    export CUBICLE_URL=${ctx.apiUrl}`);
  say(`    export CUBICLE_API_KEY=$(cat ${shellQuote(join(ctx.dataRoot, 'admin-key'))})`);
  say(
    `    curl -s -X POST -H "Authorization: Bearer $CUBICLE_API_KEY" -H 'content-type: application/json' \\`,
  );
  say(`      -d '{"wait_seconds":60}' $CUBICLE_URL/v1/pools/default/claims | tee claim.json`);
  say(`    CLAIM=$(node -p 'require("./claim.json").id')`);
  say(
    `    curl -s -H "Authorization: Bearer $CUBICLE_API_KEY" $CUBICLE_URL/v1/claims/$CLAIM/screenshot -o desktop.png`,
  );
  say(
    `    curl -s -X DELETE -H "Authorization: Bearer $CUBICLE_API_KEY" $CUBICLE_URL/v1/claims/$CLAIM`,
  );
  say();
  say(`  Data   ${ctx.dataRoot}`);
  for (const line of ctx.where) say(`           ${line}`);
  say(`  Stop   Ctrl-C here, or kill -TERM ${process.pid}`);
  say();
}

/** shellQuote makes a path safe to paste into a shell (a checkout may have spaces in its path). */
function shellQuote(text) {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
