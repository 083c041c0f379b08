#!/usr/bin/env node
import { inheritedEnv, loadGuestEnv } from './env.js';
import { buildGuestApp, redactPaths } from './server/app.js';
import { canConnect } from './server/probe-desktop.js';
import { superviseVnc, type VncSupervisor } from './vnc/supervise-vnc.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadGuestEnv();
const childEnv = inheritedEnv();

let vnc: VncSupervisor | null = null;
if (env.GUEST_VNC_PORT === undefined && env.GUEST_SUPERVISE_VNC) {
  vnc = await superviseVnc({
    display: env.DISPLAY,
    env: childEnv,
    ...(env.GUEST_VNC_HOST === '127.0.0.1' ? {} : { host: env.GUEST_VNC_HOST }),
  });
}
// An x11vnc supervised by the launcher is reported only while it answers. Probed when asked
// (at most once a second), not on a timer: an idle desktop must cost no CPU, and each probe is
// a connection x11vnc has to accept.
const externalPort = env.GUEST_VNC_PORT;
let externalProbe: { at: number; isUp: Promise<boolean> } | null = null;
function externalVncPort(port: number): Promise<number | null> {
  if (!externalProbe || performance.now() - externalProbe.at > 1000)
    externalProbe = {
      at: performance.now(),
      isUp: canConnect({ host: env.GUEST_VNC_HOST, port }, 500),
    };
  return externalProbe.isUp.then((isUp) => (isUp ? port : null));
}

const app = await buildGuestApp({
  token: env.GUEST_TOKEN,
  display: env.DISPLAY,
  sessionBusAddress: env.DBUS_SESSION_BUS_ADDRESS,
  childEnv,
  maxFileBytes: env.GUEST_MAX_FILE_BYTES,
  vncPort: () =>
    vnc ? vnc.port() : externalPort === undefined ? null : externalVncPort(externalPort),
  logger: { level: env.LOG_LEVEL, redact: { paths: redactPaths, censor: '[redacted]' } },
});

// A bug in one request must not take the desktop's driver down; it is logged and the rest goes on.
process.on('unhandledRejection', (err) => app.log.error({ err }, 'unhandled rejection'));
process.on('uncaughtException', (err) => app.log.error({ err }, 'uncaught exception'));

let isClosing = false;
/** shutdown stops accepting, ends running shell commands, then stops x11vnc (reverse of start-up). */
async function shutdown(signal: string) {
  if (isClosing) return;
  isClosing = true;
  app.log.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 10_000);
  force.unref();
  await app.close();
  await vnc?.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: env.GUEST_HOST, port: env.GUEST_PORT });
