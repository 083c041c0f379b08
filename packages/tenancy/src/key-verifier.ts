import type { ApiKeyRole } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { hashApiKey, isWellFormedApiKey } from './api-key-secret.js';
import { apiKeyByHash, touchApiKey } from './repositories/api-keys.js';

/** AuthContext is who is calling: the key, its tenant and role, and the tenant's request rate. */
export interface AuthContext {
  tenantId: string;
  apiKeyId: string;
  role: ApiKeyRole;
  /** `cbk_` + 8 characters: safe for logs and audit events. */
  keyPrefix: string;
  /** The tenant's `requests_per_minute` quota, applied per key by the rate limiter. */
  requestsPerMinute: number;
}

export interface KeyVerifierOptions {
  /**
   * How long a verified key is trusted without asking the database again. This is the bound on
   * how long a key revoked elsewhere (another replica, the CLI) keeps working here; a key
   * revoked through this verifier's `evict` stops at once. 0 disables the cache.
   */
  cacheTtlMs?: number;
  /** last_used_at is written at most this often per key, so the hot path stays a cache hit. */
  touchIntervalMs?: number;
  /** Bound on cached keys; the oldest entries go first. */
  maxEntries?: number;
  /** Told about failed last_used_at writes and background refreshes (they never fail a request). */
  onError?: (err: unknown) => void;
  now?: () => number;
}

export interface KeyVerifier {
  /** verify returns the caller's context, or null for a malformed, unknown or revoked key. */
  verify(key: string): Promise<AuthContext | null>;
  /** evict forgets a key at once (call it after revoking through this process). */
  evict(apiKeyId: string): void;
  /** Lookups sent to the database and answers served from the cache, since creation. */
  stats(): { lookups: number; hits: number };
  /** settle waits for pending last_used_at writes and background refreshes (tests, shutdown). */
  settle(): Promise<void>;
}

interface Entry {
  context: AuthContext;
  /** When the lookup that produced it started: the revocation bound counts from then. */
  fetchedAt: number;
  expiresAt: number;
}

/** A cached key used after this share of its TTL is refreshed in the background. */
const REFRESH_AFTER = 0.5;

/**
 * createKeyVerifier checks bearer keys by SHA-256 hash: one indexed lookup (api_keys.hash is
 * unique) joined to the tenant, then a short in-process cache. Unknown keys are never cached,
 * so a key created a moment ago works at once. Concurrent checks of one key share one lookup
 * (a burst after a quiet spell, when the entry has expired, costs one query, not one per
 * request), and a key in steady use is refreshed in the background before its entry expires,
 * so its callers never wait on the database; the revocation bound stays the TTL.
 */
export function createKeyVerifier(db: Db, options: KeyVerifierOptions = {}): KeyVerifier {
  const ttl = options.cacheTtlMs ?? 5_000;
  const touchEvery = options.touchIntervalMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const byHash = new Map<string, Entry>();
  const inflight = new Map<string, Promise<AuthContext | null>>();
  const lastTouched = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const stats = { lookups: 0, hits: 0 };
  // Bumped by evict: a lookup that started before an eviction must not re-cache the key.
  let evictions = 0;

  function track(work: Promise<void>) {
    const tracked = work.finally(() => pending.delete(tracked));
    pending.add(tracked);
  }

  function touch(apiKeyId: string) {
    const t = now();
    const last = lastTouched.get(apiKeyId);
    if (last !== undefined && t - last < touchEvery) return;
    lastTouched.set(apiKeyId, t);
    if (lastTouched.size > maxEntries) lastTouched.delete(lastTouched.keys().next().value!);
    // The WHERE bound also holds across replicas: each writes at most once per interval.
    track(
      touchApiKey(db, apiKeyId, new Date(t), new Date(t - touchEvery)).then(
        () => undefined,
        (err: unknown) => {
          lastTouched.delete(apiKeyId);
          options.onError?.(err);
        },
      ),
    );
  }

  async function lookup(hash: string): Promise<AuthContext | null> {
    stats.lookups++;
    const row = await apiKeyByHash(db, hash);
    if (!row || row.revoked_at) return null;
    if (row.last_used_at && !lastTouched.has(row.id))
      lastTouched.set(row.id, new Date(row.last_used_at).getTime());
    return {
      tenantId: row.tenant_id,
      apiKeyId: row.id,
      role: row.role,
      keyPrefix: row.prefix,
      requestsPerMinute: row.requests_per_minute,
    };
  }

  /** load looks a key up once for every concurrent caller and (re)fills or clears its entry. */
  function load(hash: string): Promise<AuthContext | null> {
    const running = inflight.get(hash);
    if (running) return running;
    const fetchedAt = now();
    const evictionsAtStart = evictions;
    const loading = lookup(hash)
      .then((context) => {
        if (!context || ttl <= 0 || evictions !== evictionsAtStart) byHash.delete(hash);
        else {
          byHash.delete(hash); // re-inserted last: the size bound drops the oldest first
          byHash.set(hash, { context, fetchedAt, expiresAt: fetchedAt + ttl });
          if (byHash.size > maxEntries) byHash.delete(byHash.keys().next().value!);
        }
        return context;
      })
      .finally(() => inflight.delete(hash));
    inflight.set(hash, loading);
    return loading;
  }

  return {
    async verify(key) {
      if (!isWellFormedApiKey(key)) return null;
      const hash = hashApiKey(key);
      const cached = byHash.get(hash);
      const t = now();
      let context: AuthContext | null;
      if (cached && cached.expiresAt > t) {
        stats.hits++;
        context = cached.context;
        if (t - cached.fetchedAt >= ttl * REFRESH_AFTER && !inflight.has(hash))
          // A failed refresh keeps the entry until it expires; the next use tries again.
          track(load(hash).then(() => undefined, options.onError ?? (() => undefined)));
      } else {
        byHash.delete(hash);
        context = await load(hash);
      }
      if (context) touch(context.apiKeyId);
      return context;
    },
    evict(apiKeyId) {
      evictions++;
      for (const [hash, entry] of byHash)
        if (entry.context.apiKeyId === apiKeyId) byHash.delete(hash);
    },
    stats: () => ({ ...stats }),
    async settle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
