import { readFileSync } from 'node:fs';
// A guest app without a desktop, for the shell and files suites: routes are driven with inject.
import type { FastifyInstance } from 'fastify';
import { buildGuestApp, type GuestDeps } from '../../src/server/app.js';

export const TOKEN = 't'.repeat(40);
export const auth = { authorization: `Bearer ${TOKEN}` };

/** buildGuest builds the app on a display that does not exist (:999); close it after each test. */
export function buildGuest(overrides: Partial<GuestDeps> = {}): Promise<FastifyInstance> {
  return buildGuestApp({
    token: TOKEN,
    display: ':999',
    childEnv: { ...process.env },
    maxFileBytes: 64 * 1024 * 1024,
    vncPort: () => null,
    ...overrides,
  });
}

/** post sends one authenticated JSON call and returns status and parsed body. */
export async function post(app: FastifyInstance, url: string, body: unknown) {
  const res = await app.inject({ method: 'POST', url, headers: auth, payload: body as object });
  return {
    status: res.statusCode,
    body: res.json() as Record<string, unknown> & { error?: { code: string } },
  };
}

/** isAlive: the process exists and is not a zombie (PID 1 here reaps nothing). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
