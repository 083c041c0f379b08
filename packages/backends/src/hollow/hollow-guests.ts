import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, type ErrorCodeName } from '@cubicle/contract/errors';
import {
  GUEST_PROTOCOL_VERSION,
  GuestRoutes,
  type GuestOperation,
  type HealthzResponse,
  type SecretsResponse,
  type ShellRunResult,
  type WindowListResponse,
} from '@cubicle/contract/guest';

/**
 * Hollow guests are a LOAD-TEST stand-in for desktops, like Kubernetes' kubemark hollow nodes:
 * one process answers the guest protocol for many sandboxes (each with its own bearer token),
 * with contract-valid answers after a configurable delay, so the control plane (API, worker,
 * Postgres, Redis) can be measured at 10,000 sandboxes on one machine. There is no desktop
 * behind them: `shell.run` echoes nothing and `windows.list` is empty; every other operation is
 * a contract-valid `validation_failed` refusal. Only the scale benchmark and the scale tests
 * start them (HollowBackend); nothing in `npm start` or a default pool does.
 */
export interface HollowGuestsOptions {
  /** Delay before every guest answer (ms); 0 answers at once. */
  delayMs?: number;
  /** Loopback port; 0 picks a free one. */
  port?: number;
}

export interface HollowGuests {
  /** `http://127.0.0.1:<port>`: the guest URL of every hollow sandbox and the admin API. */
  url: string;
  /** Bearer token of the admin routes (`/hollow/sandboxes`) used by HollowBackend. */
  adminToken: string;
  /** Sandboxes it currently serves. */
  readonly size: number;
  close(): Promise<void>;
}

/** The answers hollow guests give, checked against the contract by hollow-guests.test.ts. */
export const hollowAnswers = {
  healthz: (uptimeMs: number): HealthzResponse => ({
    status: 'ok',
    protocol_version: GUEST_PROTOCOL_VERSION,
    display: { name: ':0', available: true, width: 1280, height: 800 },
    a11y_bus: { available: true, registry_available: true },
    vnc_port: null,
    versions: { driver: 'hollow', node: process.versions.node },
    uptime_ms: uptimeMs,
  }),
  'windows.list': (): WindowListResponse => ({ windows: [] }),
  // A claim's secrets are taken and dropped at once: a double holds no values.
  'secrets.write': (names: string[]): SecretsResponse => ({ dir: '/run/cubicle/secrets', names }),
  'shell.run': (runId: string, durationMs: number): ShellRunResult => ({
    run_id: runId,
    pid: 1,
    exit_code: 0,
    signal: null,
    timed_out: false,
    killed: false,
    duration_ms: durationMs,
    output_encoding: 'utf8',
    stdout: '',
    stderr: '',
    stdout_truncated: false,
    stderr_truncated: false,
  }),
};

const routeByKey = new Map<string, GuestOperation>();
for (const [op, route] of Object.entries(GuestRoutes))
  if (route.transport === 'http')
    routeByKey.set(`${route.method} ${route.path}`, op as GuestOperation);

const sameToken = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** startHollowGuests starts the hollow guest server on 127.0.0.1. */
export async function startHollowGuests(options: HollowGuestsOptions = {}): Promise<HollowGuests> {
  const delayMs = options.delayMs ?? 0;
  const adminToken = randomBytes(24).toString('hex');
  // token → sandbox id: the simulated fleet (it lives exactly as long as its sandboxes).
  const byToken = new Map<string, string>();
  const tokenOf = new Map<string, string>();
  const started = Date.now();
  let runs = 0;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  // Refusals are the contract's envelope, built by AppError like every other guest answer.
  const refuse = (res: ServerResponse, code: ErrorCodeName, message: string) => {
    const error = new AppError(code, message);
    send(res, error.status, error.toEnvelope('hollow'));
  };
  const bearer = (req: IncomingMessage) =>
    /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];

  async function admin(req: IncomingMessage, res: ServerResponse, body: string) {
    const token = bearer(req);
    if (!token || !sameToken(token, adminToken))
      return refuse(res, 'unauthenticated', 'admin token');
    const url = new URL(req.url ?? '/', 'http://hollow');
    if (req.method === 'GET' && url.pathname === '/hollow/sandboxes')
      return send(res, 200, { ids: [...tokenOf.keys()] });
    if (req.method === 'POST' && url.pathname === '/hollow/sandboxes') {
      const { id } = JSON.parse(body || '{}') as { id?: unknown };
      if (typeof id !== 'string' || !/^sbx_[0-9a-z]{26}$/.test(id))
        return refuse(res, 'validation_failed', 'id must be a sandbox id');
      let guestToken = tokenOf.get(id);
      if (!guestToken) {
        guestToken = randomBytes(24).toString('hex');
        tokenOf.set(id, guestToken);
        byToken.set(guestToken, id);
      }
      return send(res, 200, { id, token: guestToken });
    }
    const match = /^\/hollow\/sandboxes\/(sbx_[0-9a-z]{26})$/.exec(url.pathname);
    if (req.method === 'DELETE' && match) {
      const guestToken = tokenOf.get(match[1]!);
      if (guestToken) byToken.delete(guestToken);
      tokenOf.delete(match[1]!);
      return send(res, 200, { deleted: Boolean(guestToken) });
    }
    return refuse(res, 'not_found', 'no such admin route');
  }

  async function guest(req: IncomingMessage, res: ServerResponse, body: string) {
    const path = (req.url ?? '/').split('?')[0]!;
    const operation = routeByKey.get(`${req.method} ${path}`);
    if (operation === 'healthz') return send(res, 200, hollowAnswers.healthz(Date.now() - started));
    const token = bearer(req);
    if (!token || !byToken.has(token)) return refuse(res, 'unauthenticated', 'unknown token');
    if (!operation) return refuse(res, 'not_found', 'no such guest route');
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    if (operation === 'windows.list') return send(res, 200, hollowAnswers['windows.list']());
    if (operation === 'secrets.write') {
      const request = JSON.parse(body || '{}') as { secrets?: { name?: unknown }[] };
      const names = (request.secrets ?? []).map((secret) => String(secret.name));
      return send(res, 200, hollowAnswers['secrets.write'](names));
    }
    if (operation === 'shell.run') {
      const request = JSON.parse(body || '{}') as { run_id?: string };
      return send(
        res,
        200,
        hollowAnswers['shell.run'](request.run_id ?? `hollow-${++runs}`, delayMs),
      );
    }
    return refuse(res, 'validation_failed', `a hollow sandbox does not serve ${operation}`);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const handle = req.url?.startsWith('/hollow/') ? admin : guest;
      handle(req, res, body).catch(() => refuse(res, 'internal_error', 'hollow guest failed'));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adminToken,
    get size() {
      return tokenOf.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
