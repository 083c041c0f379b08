import type { ApiKeyRole } from '@cubicle/contract/api';
import type { Db } from '@cubicle/db';
import { hashApiKey, isWellFormedApiKey } from './api-key-secret.js';

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
  /** Told about failed last_used_at writes (they never fail a request). */
  onError?: (err: unknown) => void;
  now?: () => number;
}

export interface KeyVerifier {
  /** verify returns the caller's context, or null for a malformed, unknown or revoked key. */
  verify(key: string): Promise<AuthContext | null>;
  /** evict forgets a key at once (call it after revoking through this process). */
  evict(apiKeyId: string): void;
  /** settle waits for pending last_used_at writes (tests, shutdown). */
  settle(): Promise<void>;
}

interface Entry {
  context: AuthContext;
  expiresAt: number;
}

/**
 * createKeyVerifier checks bearer keys by SHA-256 hash: one indexed lookup (api_keys.hash is
 * unique) joined to the tenant, then a short in-process cache. Unknown keys are never cached,
 * so a key created a moment ago works at once.
 */
export function createKeyVerifier(db: Db, options: KeyVerifierOptions = {}): KeyVerifier {
  const ttl = options.cacheTtlMs ?? 5_000;
  const touchEvery = options.touchIntervalMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const byHash = new Map<string, Entry>();
  const lastTouched = new Map<string, number>();
  const pending = new Set<Promise<void>>();

  function touch(apiKeyId: string) {
    const t = now();
    const last = lastTouched.get(apiKeyId);
    if (last !== undefined && t - last < touchEvery) return;
    lastTouched.set(apiKeyId, t);
    if (lastTouched.size > maxEntries) lastTouched.delete(lastTouched.keys().next().value!);
    // The WHERE bound also holds across replicas: each writes at most once per interval.
    const cutoff = new Date(t - touchEvery);
    const write = db.apiKey
      .updateMany({
        where: { id: apiKeyId, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: cutoff } }] },
        data: { lastUsedAt: new Date(t) },
      })
      .then(
        () => undefined,
        (err: unknown) => {
          lastTouched.delete(apiKeyId);
          options.onError?.(err);
        },
      )
      .finally(() => pending.delete(write));
    pending.add(write);
  }

  async function lookup(hash: string): Promise<AuthContext | null> {
    const row = await db.apiKey.findUnique({
      where: { hash },
      select: {
        id: true,
        tenantId: true,
        role: true,
        prefix: true,
        revokedAt: true,
        lastUsedAt: true,
        tenant: { select: { requestsPerMinute: true } },
      },
    });
    if (!row || row.revokedAt) return null;
    if (row.lastUsedAt && !lastTouched.has(row.id))
      lastTouched.set(row.id, row.lastUsedAt.getTime());
    return {
      tenantId: row.tenantId,
      apiKeyId: row.id,
      role: row.role,
      keyPrefix: row.prefix,
      requestsPerMinute: row.tenant.requestsPerMinute,
    };
  }

  return {
    async verify(key) {
      if (!isWellFormedApiKey(key)) return null;
      const hash = hashApiKey(key);
      const cached = byHash.get(hash);
      let context: AuthContext | null;
      if (cached && cached.expiresAt > now()) {
        context = cached.context;
      } else {
        byHash.delete(hash);
        context = await lookup(hash);
        if (context && ttl > 0) {
          byHash.set(hash, { context, expiresAt: now() + ttl });
          if (byHash.size > maxEntries) byHash.delete(byHash.keys().next().value!);
        }
      }
      if (context) touch(context.apiKeyId);
      return context;
    },
    evict(apiKeyId) {
      for (const [hash, entry] of byHash)
        if (entry.context.apiKeyId === apiKeyId) byHash.delete(hash);
    },
    async settle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
