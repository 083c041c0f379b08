#!/usr/bin/env -S node --max-semi-space-size=1 --single-threaded
// cubicle-desktop: start a desktop session in the foreground (Ctrl-C or SIGTERM stops all of it),
// or stop one started elsewhere through its state file. The shebang carries DAEMON_NODE_FLAGS
// (daemon-node-flags.ts; a test keeps them equal): with `--daemon in-process`, as in the image,
// this one process is the whole driver.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { inheritedEnv } from '../env.js';
import { trustEgressCaIn, userNssDb } from './egress-trust.js';
import { loadLauncherEnv } from './env.js';
import { SANDBOX_PATHS } from './sandbox-spec.js';
import { isAlive, killSession } from './session-processes.js';
import { startDesktop } from './start-desktop.js';

const USAGE = `usage:
  cubicle-desktop start [--width 1280] [--height 800] [--glx] [--daemon in-process|child|none]
                        [--port N] [--host ADDR] [--vnc-port N] [--state-file PATH]
      Prints one JSON line (display, buses, VNC port, driver URL and token, app env) and runs
      until SIGINT/SIGTERM, then stops every process of the session. In a sandbox image the
      token comes from CUBICLE_GUEST_TOKEN (then it is not printed) and the port from
      CUBICLE_GUEST_PORT; --host 0.0.0.0 makes the driver and VNC reachable from outside.
  cubicle-desktop stop --state-file PATH
      Stops the session a \`start --state-file PATH\` is running.`;

interface StateFile {
  launcherPid: number;
  id: string;
}

async function start(values: Record<string, string | boolean | undefined>) {
  const daemon = (values.daemon as string | undefined) ?? 'in-process';
  if (!['in-process', 'child', 'none'].includes(daemon))
    throw new Error(`--daemon ${daemon}?\n${USAGE}`);
  const num = (name: string) => (values[name] === undefined ? undefined : Number(values[name]));
  const env = loadLauncherEnv();
  await makeSecretsDir();
  // A Pod whose egress point injects credentials mounts the egress CA: Chromium (and any NSS
  // program) trusts it from the start, as in a local sandbox (sandbox-entry.ts).
  const home = inheritedEnv().HOME;
  if (home) await trustEgressCaIn(userNssDb(home));
  const session = await startDesktop({
    width: num('width'),
    height: num('height'),
    withGlx: values.glx === true,
    daemon: daemon as 'in-process' | 'child' | 'none',
    guestPort: num('port') ?? env.CUBICLE_GUEST_PORT,
    guestToken: env.CUBICLE_GUEST_TOKEN,
    // The desktop's apps (and shell runs) do not get the driver's token.
    baseEnv: Object.fromEntries(
      Object.entries(inheritedEnv()).filter(([name]) => name !== 'CUBICLE_GUEST_TOKEN'),
    ),
    listenHost: values.host as string | undefined,
    vncPort: num('vnc-port'),
  });
  const stateFile = values['state-file'] as string | undefined;
  if (stateFile) {
    const state: StateFile = { launcherPid: process.pid, id: session.id };
    await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`cubicle-desktop: ${signal}, stopping ${session.display}\n`);
    await session.stop();
    if (stateFile) await rm(stateFile, { force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGHUP', () => void stop('SIGHUP'));
  // A bug in one driver request must not stop the whole desktop (as in the daemon's main.ts).
  const report = (err: unknown) =>
    process.stderr.write(`cubicle-desktop: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.on('unhandledRejection', report);
  process.on('uncaughtException', report);
  process.stdout.write(
    `${JSON.stringify({
      id: session.id,
      display: session.display,
      dbusAddress: session.dbusAddress,
      a11yBusAddress: session.a11yBusAddress,
      vncPort: session.vncPort,
      guestUrl: session.guestUrl,
      // A token handed in through the environment belongs to someone else: keep it out of logs.
      guestToken: env.CUBICLE_GUEST_TOKEN ? '[from CUBICLE_GUEST_TOKEN]' : session.guestToken,
      pids: session.pids,
      startMs: Math.round(session.startMs),
      env: session.env,
    })}\n`,
  );
}

/**
 * makeSecretsDir creates the sandbox's secrets directory (0700, ours) when the image runs with
 * an in-memory /run/cubicle (the Kubernetes Pod spec mounts one); the guest writes per-claim
 * secret files there. Elsewhere there is no /run/cubicle to write to, and nothing is done.
 */
async function makeSecretsDir() {
  await mkdir(SANDBOX_PATHS.secrets, { mode: 0o700 }).catch(() => undefined);
}

async function stop(values: Record<string, string | boolean | undefined>) {
  const stateFile = values['state-file'] as string | undefined;
  if (!stateFile) throw new Error(`stop needs --state-file\n${USAGE}`);
  const state = JSON.parse(await readFile(stateFile, 'utf8')) as StateFile;
  // The launcher stops its own session; whatever survives it is found by the session marker.
  if (await isAlive(state.launcherPid)) {
    process.kill(state.launcherPid, 'SIGTERM');
    for (let i = 0; i < 200 && (await isAlive(state.launcherPid)); i += 1) await sleep(50);
  }
  const leftovers = await killSession(state.id, new Set());
  await rm(stateFile, { force: true });
  process.stdout.write(`${JSON.stringify({ stopped: state.id, leftovers })}\n`);
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    width: { type: 'string' },
    height: { type: 'string' },
    glx: { type: 'boolean' },
    daemon: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'vnc-port': { type: 'string' },
    'state-file': { type: 'string' },
  },
});

try {
  if (positionals[0] === 'start') await start(values);
  else if (positionals[0] === 'stop') await stop(values);
  else {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`cubicle-desktop: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
