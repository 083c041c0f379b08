import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Redis side of sandbox lanes (see sandbox-lanes.ts). Every state change is one Lua script,
 * so a process killed between two commands never leaves a lane half-moved. Invariant kept by
 * every script: a lane id is in `ready` (once) exactly when its list holds jobs and no job of it
 * is running (`active` has no entry for it).
 *
 * Keys under `<prefix>:lanes:`: `ready` (list of lane ids), `q:<lane>` (list of job JSON),
 * `active` (hash lane → holder), `leases` (zset lane → lease end, ms), `marker` (zset with one
 * member: "something became ready", what idle dispatchers block on). Lane keys are built inside
 * the scripts, which is fine on one Redis (not Redis Cluster, which Cubicle does not use).
 */

/** push: KEYS ready, active, marker; ARGV prefix, lane, job JSON. Returns the lane's length. */
const PUSH = `
local q = ARGV[1] .. ':lanes:q:' .. ARGV[2]
local n = redis.call('RPUSH', q, ARGV[3])
if n == 1 and redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  redis.call('RPUSH', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[3], 0, 'm')
end
return n`;

/**
 * take: KEYS ready, active, leases, marker; ARGV prefix, holder prefix, lease ms, max jobs.
 * Pops up to max ready lanes and the head job of each, holding each lane under a lease.
 * Returns a flat list lane, holder, job JSON, … A holder reads `<process>|<ms>|<i>|<job id>`, so
 * a sweep can tell which job was lost.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, tonumber(ARGV[4]) do
  local lane = redis.call('LPOP', KEYS[1])
  if not lane then break end
  local job = redis.call('LPOP', ARGV[1] .. ':lanes:q:' .. lane)
  if job then
    local holder = ARGV[2] .. '|' .. now .. '|' .. i .. '|' .. tostring(cjson.decode(job).id)
    redis.call('HSET', KEYS[2], lane, holder)
    redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]), lane)
    table.insert(out, lane)
    table.insert(out, holder)
    table.insert(out, job)
  end
end
if redis.call('LLEN', KEYS[1]) > 0 then redis.call('ZADD', KEYS[4], 0, 'm') end
return out`;

/** release (shared by finish and sweep): frees a lane and makes it ready again if jobs wait. */
const RELEASE_FN = `
local function release(lane)
  redis.call('HDEL', KEYS[2], lane)
  redis.call('ZREM', KEYS[3], lane)
  if redis.call('LLEN', ARGV[1] .. ':lanes:q:' .. lane) > 0 then
    redis.call('RPUSH', KEYS[1], lane)
    redis.call('ZADD', KEYS[4], 0, 'm')
  end
end`;

/**
 * finish: KEYS ready, active, leases, marker; ARGV prefix, lane, holder[, channel, message].
 * Publishes the job's reply (whether or not the lane is still held: its caller waits for it),
 * then frees the lane. 1 if it still held it.
 */
const FINISH = `${RELEASE_FN}
if ARGV[5] then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
if redis.call('HGET', KEYS[2], ARGV[2]) ~= ARGV[3] then return 0 end
release(ARGV[2])
return 1`;

/** renew: KEYS active, leases; ARGV lease ms, then lane, holder pairs. Returns lanes renewed. */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[i])
    n = n + 1
  end
end
return n`;

/**
 * sweep: KEYS ready, active, leases, marker; ARGV prefix, max. Frees lanes whose lease ended
 * (their holder died mid-job; the job is not run again) and returns lane, holder pairs.
 */
const SWEEP = `${RELEASE_FN}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for _, lane in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))) do
  table.insert(out, lane)
  table.insert(out, redis.call('HGET', KEYS[2], lane) or '')
  release(lane)
end
return out`;

/** drop: KEYS ready; ARGV prefix, lane. Deletes a lane's queued jobs (its sandbox is gone). */
const DROP = `
local n = redis.call('LLEN', ARGV[1] .. ':lanes:q:' .. ARGV[2])
redis.call('DEL', ARGV[1] .. ':lanes:q:' .. ARGV[2])
redis.call('LREM', KEYS[1], 0, ARGV[2])
return n`;

const SCRIPTS = { PUSH, TAKE, FINISH, RENEW, SWEEP, DROP };
export type LaneScript = keyof typeof SCRIPTS;
const SHAS = Object.fromEntries(
  Object.entries(SCRIPTS).map(([k, v]) => [k, createHash('sha1').update(v).digest('hex')]),
) as Record<LaneScript, string>;

/** laneKeys are the fixed keys of one prefix's lanes. */
export function laneKeys(prefix: string) {
  const k = (s: string) => `${prefix}:lanes:${s}`;
  return { ready: k('ready'), active: k('active'), leases: k('leases'), marker: k('marker') };
}

/**
 * runLaneScript runs a script by its sha and loads it on NOSCRIPT (a restarted Redis, a new
 * one): one round trip per call in the steady state.
 */
export async function runLaneScript(
  redis: Redis,
  script: LaneScript,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(SHAS[script], keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err as Error).message?.includes('NOSCRIPT')) throw err;
    return redis.eval(SCRIPTS[script], keys.length, ...keys, ...args);
  }
}
