import { GUEST_PROTOCOL_VERSION, GuestRoutes, type HealthzResponse } from '@cubicle/contract/guest';
import type { FastifyInstance } from 'fastify';
import type { GuestDeps } from './deps.js';
import { guestRoute } from './guest-route.js';
import {
  isDisplayUp,
  probeA11y,
  readDisplayInfo,
  readDriverVersion,
  type DisplayInfo,
} from './probe-desktop.js';

/**
 * registerHealthRoutes mounts the open /healthz. Probes run per request but each is bounded
 * (socket connect, D-Bus calls with deadlines); the screen size is read once and cached because
 * it needs an xdpyinfo process.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: GuestDeps) {
  const startedAt = performance.now();
  let info: DisplayInfo | null = null;
  guestRoute(app, GuestRoutes.healthz, async (): Promise<HealthzResponse> => {
    const [displayUp, a11y] = await Promise.all([
      isDisplayUp(deps.display),
      probeA11y(deps.sessionBusAddress),
    ]);
    if (displayUp && !info) info = await readDisplayInfo(deps.display);
    return {
      status: displayUp && a11y.registryAvailable ? 'ok' : 'degraded',
      protocol_version: GUEST_PROTOCOL_VERSION,
      display: {
        name: deps.display,
        available: displayUp,
        ...(displayUp && info ? { width: info.width, height: info.height } : {}),
      },
      a11y_bus: { available: a11y.available, registry_available: a11y.registryAvailable },
      vnc_port: await deps.vncPort(),
      versions: {
        driver: readDriverVersion(),
        node: process.versions.node,
        ...(info?.xServer ? { x_server: info.xServer } : {}),
      },
      uptime_ms: performance.now() - startedAt,
    };
  });
}
