// @cubicle/embedded starts private PostgreSQL and Redis processes from Debian's packages: the
// persistent default behind `npm start` (under .cubicle/) and the test harness (temp dirs).
export {
  startPostgres,
  stopPostgresAt,
  type PostgresServer,
  type StartPostgresOptions,
} from './postgres.js';
export { startRedis, stopRedisAt, type RedisServer, type StartRedisOptions } from './redis.js';
export type { RedisUser } from './redis-auth.js';
export { ensurePasswordFile, type Password } from './credentials.js';
export { redisOptionsFromUrl, type RedisConnectionOptions } from '@cubicle/config';
export { startReaper, type Reaper, type ReapTarget } from './reaper.js';
export { findPostgres, findRedisServer, installedPostgresVersions } from './binaries.js';
export {
  isRunning,
  processStartTime,
  stopProcess,
  type ProcessExit,
  type StopTarget,
} from './proc.js';
export type { IfRunning, LogFn, ServiceProcess } from './service.js';
