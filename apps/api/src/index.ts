export { buildApp, type BuildOptions, type HealthCheck, type ViewerOptions } from './app.js';
export { ApiEnv, loadApiEnv } from './env.js';
export { createRedis } from './lib/redis.js';
export { ApiMetrics } from './metrics/api-metrics.js';
export { serveMetrics, type MetricsServer } from './metrics/metrics-server.js';
