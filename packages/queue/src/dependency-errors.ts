/**
 * Errors that say "a dependency (Postgres, Redis, an API server) cannot be reached right now",
 * as opposed to "this job's work failed". Node's socket errors, PostgreSQL's connection and
 * shutdown SQLSTATEs, and Prisma's connection codes; Prisma and node-postgres carry the socket
 * code on the error itself or on its `cause`.
 */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOENT', // a unix socket whose server is gone
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
const POSTGRES_SQLSTATES = new Set([
  '08000', // connection_exception
  '08001', // sqlclient_unable_to_establish_sqlconnection
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '53300', // too_many_connections
]);
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
const MESSAGES = [
  /connection terminated/i,
  /connection is closed/i,
  /can't reach database server/i,
  /server closed the connection unexpectedly/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /timeout exceeded when trying to connect/i,
  /stream isn't writeable/i,
  /reached the max retries per request limit/i,
];

/**
 * isDependencyUnavailable tells whether `err` (or an error in its `cause` chain) means a
 * dependency was unreachable, so the work should wait and run again rather than count as failed.
 */
export function isDependencyUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    if (typeof e !== 'object') return false;
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || POSTGRES_SQLSTATES.has(code) || PRISMA_CODES.has(code))
        return true;
    }
    if (typeof message === 'string' && MESSAGES.some((m) => m.test(message))) return true;
    e = cause;
  }
  return false;
}
