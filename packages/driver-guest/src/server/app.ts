import websocket from '@fastify/websocket';
import { GUEST_MAX_BODY_BYTES, warmGuestSchemas } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import { registerA11yRoutes } from '../a11y/routes.js';
import { registerArchiveRoutes } from '../archive/routes.js';
import { registerFilesRoutes } from '../files/routes.js';
import { registerInputRoutes } from '../input/routes.js';
import { registerRecordingRoutes } from '../recording/routes.js';
import { registerScreenRoutes } from '../screen/routes.js';
import { registerSecretsRoutes } from '../secrets/routes.js';
import { registerShellRoutes } from '../shell/routes.js';
import { registerVideoRoutes } from '../video/routes.js';
import { registerWindowsRoutes } from '../windows/routes.js';
import { registerAuth } from './auth.js';
import type { GuestDeps } from './deps.js';
import { createServer } from '@cubicle/http';
import { registerHealthRoutes } from './health-routes.js';

export type { GuestDeps } from './deps.js';

/** Log paths that may carry secrets; pino replaces their values. */
export const redactPaths = [
  'req.headers.authorization',
  '*.token',
  '*.content',
  '*.stdin',
  '*.value',
];

/**
 * buildGuestApp assembles the guest protocol v1 without listening, so tests drive it with
 * `inject`/`injectWS` and main.ts (or the desktop launcher) adds only the listener.
 *
 * Each capability lives in its own folder and exports `register<Capability>Routes(app, deps)`,
 * which mounts its entries of `GuestRoutes` with `guestRoute`; add one line below per folder.
 * Capabilities that hold resources (bus connections, recorders) close them in an `onClose` hook.
 */
export async function buildGuestApp(deps: GuestDeps): Promise<FastifyInstance> {
  // Request ids (the API's own, passed on) and the error envelope, as in the API (@cubicle/http).
  const app = createServer({
    logger: deps.logger ?? false,
    bodyLimit: GUEST_MAX_BODY_BYTES,
    // Long enough for a shell run at its maximum timeout plus the kill grace; the socket is idle
    // while such a call runs, so the idle timeout is the same bound (30 s cut long calls off).
    connectionTimeout: 3_700_000,
    requestTimeout: 3_700_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });
  registerAuth(app, deps.token);
  await app.register(websocket, { options: { maxPayload: GUEST_MAX_BODY_BYTES } });

  registerHealthRoutes(app, deps);
  registerShellRoutes(app, deps);
  registerFilesRoutes(app, deps);
  registerSecretsRoutes(app, deps);
  // The guest archive (src/archive): profiles and snapshots move home files through it.
  registerArchiveRoutes(app, deps);
  // Screen, windows, input and recording (src/screen, src/windows, src/input, src/recording):
  registerScreenRoutes(app, deps);
  registerWindowsRoutes(app, deps);
  registerInputRoutes(app, deps);
  registerRecordingRoutes(app, deps);
  // The screen video a recorded claim's worker pulls (src/video).
  registerVideoRoutes(app, deps);
  // Accessibility observe / act / verify (src/a11y):
  registerA11yRoutes(app, deps);

  await app.ready();
  // The first action reaches a guest that has answered only its priming: its element action's
  // schemas are built now, while the desktop waits warm, not inside that call (warm-up.ts).
  // Observe's are left to the priming, which observes through this route with real rows.
  setImmediate(() => warmGuestSchemas(['act.element']));
  return app;
}
