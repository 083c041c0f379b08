import 'server-only';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getEnv } from '../env';
import { redis } from '../redis';
import { SessionStore, type SessionData } from './store';

export const SESSION_COOKIE = 'cubicle_session';

function store(): SessionStore {
  const env = getEnv();
  return new SessionStore({
    redis: redis(),
    prefix: env.CUBICLE_WEB_REDIS_PREFIX,
    secret: Buffer.from(env.CUBICLE_WEB_SESSION_SECRET, 'base64'),
    ttlSeconds: env.CUBICLE_WEB_SESSION_TTL_SECONDS,
  });
}

/** isHttps: Secure cookies when the public URL is https or a TLS proxy in front says so. */
async function isHttps(): Promise<boolean> {
  const url = getEnv().CUBICLE_WEB_URL;
  if (url) return url.startsWith('https:');
  return (await headers()).get('x-forwarded-proto') === 'https';
}

/** startSession stores the session server-side and sets the cookie carrying only its random id. */
export async function startSession(data: SessionData): Promise<void> {
  const id = await store().create(data);
  (await cookies()).set(SESSION_COOKIE, id, {
    httpOnly: true,
    sameSite: 'lax',
    secure: await isHttps(),
    path: '/',
    maxAge: getEnv().CUBICLE_WEB_SESSION_TTL_SECONDS,
  });
}

/** currentSession reads the signed-in session, or null. */
export async function currentSession(): Promise<SessionData | null> {
  const id = (await cookies()).get(SESSION_COOKIE)?.value;
  return id ? store().get(id) : null;
}

/** requireSession is the gate of every dashboard page and action: no session, no API key, back to sign-in. */
export async function requireSession(): Promise<SessionData> {
  const session = await currentSession();
  if (!session) redirect('/login');
  return session;
}

/** endSession deletes the server-side session and the cookie (sign out, or a key the API refused). */
export async function endSession(): Promise<void> {
  const jar = await cookies();
  const id = jar.get(SESSION_COOKIE)?.value;
  if (id) await store().destroy(id);
  jar.delete(SESSION_COOKIE);
}
