import type { Redis } from 'ioredis';
import { z } from 'zod';
import { newSessionId, seal, sessionKeyId, unseal } from './seal';

/** SessionData is what a session holds server-side; `apiKey` never leaves this process. */
export const SessionData = z.object({
  apiKey: z.string().min(1),
  keyPrefix: z.string(),
  role: z.enum(['admin', 'member']),
  tenantName: z.string().nullable(),
  createdAt: z.string(),
});
export type SessionData = z.infer<typeof SessionData>;

export interface SessionStoreOptions {
  redis: Redis;
  /** Key prefix, e.g. `cubicle:web:`. */
  prefix: string;
  /** 32-byte AES key. */
  secret: Buffer;
  ttlSeconds: number;
}

/**
 * SessionStore keeps dashboard sessions in Redis: the key is a hash of the cookie's random id,
 * the value the session sealed with AES-GCM, expiring with the cookie.
 */
export class SessionStore {
  constructor(private readonly options: SessionStoreOptions) {}

  private redisKey(keyId: string) {
    return `${this.options.prefix}session:${keyId}`;
  }

  /** create stores a new session and returns the id to put in the cookie. */
  async create(data: SessionData): Promise<string> {
    const id = newSessionId();
    const keyId = sessionKeyId(id)!;
    const value = seal(this.options.secret, JSON.stringify(SessionData.parse(data)), keyId);
    await this.options.redis.set(this.redisKey(keyId), value, 'EX', this.options.ttlSeconds);
    return id;
  }

  /** get returns the session of a cookie value, or null when unknown, expired or unreadable. */
  async get(sessionId: string): Promise<SessionData | null> {
    const keyId = sessionKeyId(sessionId);
    if (!keyId) return null;
    const sealed = await this.options.redis.get(this.redisKey(keyId));
    if (!sealed) return null;
    const plain = unseal(this.options.secret, sealed, keyId);
    if (plain === null) return null;
    const parsed = SessionData.safeParse(JSON.parse(plain));
    return parsed.success ? parsed.data : null;
  }

  /** destroy deletes a session; it is idempotent. */
  async destroy(sessionId: string): Promise<void> {
    const keyId = sessionKeyId(sessionId);
    if (keyId) await this.options.redis.del(this.redisKey(keyId));
  }
}
