#!/usr/bin/env node
import { inheritedEnv, loadGuestEnv } from './env.js';
import { buildGuestApp, redactPaths } from './server/app.js';
import { canConnect } from './server/probe-desktop.js';
import { superviseVnc, type VncSupervisor } from './vnc/supervise-vnc.js';

// Parse configuration before anything starts: a bad variable stops the process here.
const env = loadGuestEnv();
const childEnv = inheritedEnv();

let vnc: VncSupervisor | null = null;
let externalVncUp = false;
if (env.GUEST_VNC_PORT === undefined && env.GUEST_SUPERVISE_VNC) {
  vnc = await superviseVnc({
    display: env.DISPLAY,
    env: childEnv,
    ...(env.GUEST_VNC_HOST === '127.0.0.1' ? {} : { host: env.GUEST_VNC_HOST }),
  });
}
// An x11vnc supervised by the launcher is reported only while it answers; probed in the background.
const externalPort = env.GUEST_VNC_PORT;
const probe =
  externalPort === undefined
    ? null
    : setInterval(() => {
        void canConnect({ host: env.GUEST_VNC_HOST, port: externalPort }, 500).then(
          (ok) => (externalVncUp = ok),
        );
      }, 2000);
probe?.unref();
if (externalPort !== undefined)
  externalVncUp = await canConnect({ host: env.GUEST_VNC_HOST, port: externalPort }, 500);

const app = await buildGuestApp({
  token: env.GUEST_TOKEN,
  display: env.DISPLAY,
  sessionBusAddress: env.DBUS_SESSION_BUS_ADDRESS,
  childEnv,
  maxFileBytes: env.GUEST_MAX_FILE_BYTES,
  vncPort: () => (vnc ? vnc.port() : externalVncUp ? (externalPort ?? null) : null),
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
  if (probe) clearInterval(probe);
  await app.close();
  await vnc?.stop();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: env.GUEST_HOST, port: env.GUEST_PORT });
