export { WorkerEnv, loadWorkerEnv } from './env.js';
export { buildHandlers, staticQueues } from './handlers.js';
export { WorkerMetrics } from './metrics.js';
