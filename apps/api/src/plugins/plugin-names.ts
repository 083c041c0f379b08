/**
 * Plugin names every API plugin is registered under. A plugin lists the ones it needs by these
 * names (fastify-plugin `dependencies`), and Fastify refuses to start
 * (FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED) when one of them is missing or registered after it:
 * the order buildApp lists the plugins in is checked at start-up, not remembered in comments.
 */
export const Plugin = {
  connections: 'cubicle-connections',
  metrics: 'cubicle-metrics',
  identity: 'cubicle-identity',
  tenantRoutes: 'cubicle-tenant-routes',
  webhookRoutes: 'cubicle-webhook-routes',
  websockets: 'cubicle-websockets',
  viewer: 'cubicle-viewer',
  runFinishedWebhooks: 'cubicle-run-finished-webhooks',
  poolRoutes: 'cubicle-pool-routes',
  usageRoutes: 'cubicle-usage-routes',
  claimRoutes: 'cubicle-claim-routes',
  secretRoutes: 'cubicle-secret-routes',
  driveRoutes: 'cubicle-drive-routes',
  mcp: 'cubicle-mcp',
  runRoutes: 'cubicle-run-routes',
  runEventStreams: 'cubicle-run-event-streams',
  egressRoutes: 'cubicle-egress-routes',
  replayRoutes: 'cubicle-replay-routes',
  recordingRoutes: 'cubicle-recording-routes',
  closeRemainingWebSockets: 'cubicle-close-remaining-websockets',
  systemRoutes: 'cubicle-system-routes',
} as const;
export type PluginName = (typeof Plugin)[keyof typeof Plugin];
