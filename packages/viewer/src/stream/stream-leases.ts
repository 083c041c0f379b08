import type { StreamLimits } from './live-streams.js';

/** LeaseRedis is the part of an ioredis client the leases need. */
export interface LeaseRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

export type LeaseResult =
  { admitted: true; release(): void } | { admitted: false; limit: 'ticket_limit' | 'tenant_limit' };

export interface StreamLeases {
  /** reserve takes one stream slot of the ticket and of the tenant, cluster-wide, or names the full one. */
  reserve(ticketId: string, tenantId: string): Promise<LeaseResult>;
  /** Leases this process holds (open streams). */
  readonly size: number;
  /** close stops renewing and gives back every lease this process holds. */
  close(): Promise<void>;
}

export interface StreamLeaseOptions {
  /** Key prefix (the installation's queue prefix). */
  prefix: string;
  limits: StreamLimits;
  /** A lease not renewed for this long is gone (its process died). Renewed every third of it. */
  leaseMs?: number;
  /** Redis failures: admission then falls back to this process's own limits. */
  onError?: (err: unknown) => void;
}

// Server time (TIME) so replicas with skewed clocks agree on what has expired. Expired leases
// are dropped first; then both limits are checked and both slots taken, atomically.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 2 end
local expiry = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
redis.call('ZADD', KEYS[2], expiry, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4] * 2)
redis.call('PEXPIRE', KEYS[2], ARGV[4] * 2)
return 0
`;

// Renewal re-adds a lease that was dropped meanwhile (a Redis blip): the stream is still open.
const RENEW = `
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], expiry, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ARGV[2] * 2)
end
return 0
`;

const RELEASE = `
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
`;

let counter = 0;

/**
 * createStreamLeases makes the viewer stream limits hold across every API replica: each open
 * stream holds a lease in two Redis sorted sets (its ticket's and its tenant's), scored by
 * expiry. The process renews the leases of its open streams; a crashed process's leases lapse
 * within `leaseMs`, so no count is ever stranded. When Redis fails, admission falls back to the
 * per-process limits (LiveStreams) rather than refusing every viewer.
 */
export function createStreamLeases(redis: LeaseRedis, options: StreamLeaseOptions): StreamLeases {
  const leaseMs = options.leaseMs ?? 30_000;
  const onError = options.onError ?? (() => undefined);
  const keyOf = (kind: 'ticket' | 'tenant', id: string) =>
    `${options.prefix}:viewer:streams:${kind}:${id}`;
  const owner = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const held = new Map<string, [string, string]>();

  const renew = () => {
    for (const [member, keys] of held)
      redis.eval(RENEW, 2, ...keys, member, leaseMs).catch(onError);
  };
  const timer = setInterval(renew, Math.max(100, Math.floor(leaseMs / 3)));
  timer.unref();

  const release = (member: string) => {
    const keys = held.get(member);
    if (!keys) return;
    held.delete(member);
    redis.eval(RELEASE, 2, ...keys, member).catch(onError);
  };

  return {
    async reserve(ticketId, tenantId) {
      const keys: [string, string] = [keyOf('ticket', ticketId), keyOf('tenant', tenantId)];
      const member = `${owner}:${(counter += 1)}`;
      let answer: unknown;
      try {
        answer = await redis.eval(
          RESERVE,
          2,
          ...keys,
          member,
          options.limits.perTicket,
          options.limits.perTenant,
          leaseMs,
        );
      } catch (err) {
        onError(err);
        return { admitted: true, release: () => undefined };
      }
      if (answer === 1) return { admitted: false, limit: 'ticket_limit' };
      if (answer === 2) return { admitted: false, limit: 'tenant_limit' };
      held.set(member, keys);
      return { admitted: true, release: () => release(member) };
    },
    get size() {
      return held.size;
    },
    async close() {
      clearInterval(timer);
      const all = [...held.entries()];
      held.clear();
      await Promise.all(
        all.map(([member, keys]) => redis.eval(RELEASE, 2, ...keys, member).catch(onError)),
      );
    },
  };
}
