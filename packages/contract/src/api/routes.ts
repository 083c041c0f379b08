import type { RouteDef, SocketRouteDef } from './route-def.js';
import { apiKeyRoutes } from './routes/api-key-routes.js';
import { auditRoutes } from './routes/audit-routes.js';
import { claimRoutes } from './routes/claim-routes.js';
import { driveRoutes } from './routes/drive-routes.js';
import { poolRoutes } from './routes/pool-routes.js';
import { secretRoutes } from './routes/secret-routes.js';
import { runRoutes, runSocketRoutes } from './routes/run-routes.js';
import { systemRoutes } from './routes/system-routes.js';
import { tenantRoutes } from './routes/tenant-routes.js';
import { viewerRoutes, viewerSocketRoutes } from './routes/viewer-routes.js';
import { mcpTokenRoutes } from './routes/mcp-token-routes.js';
import { handoffRoutes } from './routes/handoff-routes.js';
import { webhookRoutes } from './routes/webhook-routes.js';
import { usageRoutes } from './routes/usage-routes.js';
import { egressRoutes } from './routes/egress-routes.js';
import { recordingRoutes } from './routes/recording-routes.js';
import { replayRoutes } from './routes/replay-routes.js';
import { profileRoutes } from './routes/profile-routes.js';
import { snapshotRoutes } from './routes/snapshot-routes.js';

export { IdempotencyHeaders } from './routes/shared.js';

/** Routes is every v1 endpoint; the OpenAPI document lists them in this order. */
export const Routes = {
  ...systemRoutes,
  ...tenantRoutes,
  ...apiKeyRoutes,
  ...poolRoutes,
  ...claimRoutes,
  ...driveRoutes,
  ...viewerRoutes,
  ...mcpTokenRoutes,
  ...handoffRoutes,
  ...secretRoutes,
  ...runRoutes,
  ...auditRoutes,
  ...webhookRoutes,
  ...usageRoutes,
  ...egressRoutes,
  ...recordingRoutes,
  ...replayRoutes,
  ...profileRoutes,
  ...snapshotRoutes,
} satisfies Record<string, RouteDef>;

export type RouteName = keyof typeof Routes;

/** SocketRoutes is every v1 WebSocket endpoint (the document's `x-cubicle-websockets`). */
export const SocketRoutes = {
  ...runSocketRoutes,
  ...viewerSocketRoutes,
} satisfies Record<string, SocketRouteDef>;

export type SocketRouteName = keyof typeof SocketRoutes;
