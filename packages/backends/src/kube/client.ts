import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  abortReason,
  backoffDelay,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  retryAfterMs,
  sleep,
} from './backoff.js';

/** KubeApiError is a non-2xx answer of the API server (its Status reason and message kept). */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export const isNotFound = (err: unknown) => err instanceof KubeApiError && err.status === 404;
export const isConflict = (err: unknown) => err instanceof KubeApiError && err.status === 409;
export const isGone = (err: unknown) => err instanceof KubeApiError && err.status === 410;

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** For PATCH: merge (default) or JSON patch. */
  contentType?: string;
  /** Per attempt; DEFAULT_TIMEOUT_MS by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Attempts for 429/5xx/network errors (1 = no retry). */
  attempts?: number;
}

export interface WatchRequest {
  path: string;
  query: Record<string, string | number | boolean | undefined>;
  /** Called per event line (parsed JSON). */
  onEvent(event: unknown): void;
  /** Abort the stream when no byte arrived for this long (the server-side timeout plus slack). */
  idleTimeoutMs: number;
  signal: AbortSignal;
}

export interface KubeClient {
  request<T>(req: KubeRequest): Promise<T>;
  /** Streams a watch until the server ends it (resolves) or it fails (rejects). */
  watch(req: WatchRequest): Promise<void>;
  close(): void;
}

export const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_ATTEMPTS = 4;

/**
 * createKubeClient is a small REST client over the credentials @kubernetes/client-node resolves
 * (kubeconfig, in-cluster token, exec plugins). It exists so that every call has a timeout,
 * honours an AbortSignal, and retries overload (429 with Retry-After) and server errors with
 * backoff — which the generated clients leave to the caller. One keep-alive agent is shared.
 */
export function createKubeClient(kc: KubeConfig): KubeClient {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current Kubernetes cluster');
  const server = new URL(cluster.server);
  const isHttps = server.protocol === 'https:';
  const basePath = server.pathname.replace(/\/$/, '');
  let agent: http.Agent | null = null;

  // Headers are resolved per call: tokens (service account files, exec plugins) rotate.
  async function baseOptions(): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    agent ??= isHttps
      ? new https.Agent({
          keepAlive: true,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          rejectUnauthorized: opts.rejectUnauthorized ?? true,
        })
      : new http.Agent({ keepAlive: true });
    return {
      protocol: server.protocol,
      hostname: server.hostname.replace(/^\[|\]$/g, ''),
      port: server.port || (isHttps ? 443 : 80),
      headers: { ...(opts.headers as Record<string, string>) },
      auth: opts.auth,
      agent,
    };
  }

  const urlPath = (path: string, query: KubeRequest['query'] = {}) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return `${basePath}${path}${qs ? `?${qs}` : ''}`;
  };

  function once<T>(req: KubeRequest, options: https.RequestOptions): Promise<T> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    return new Promise<T>((resolve, reject) => {
      const signal = req.signal
        ? AbortSignal.any([req.signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs);
      const r = (isHttps ? https : http).request(
        {
          ...options,
          method: req.method,
          path: urlPath(req.path, req.query),
          signal,
          headers: {
            ...options.headers,
            accept: 'application/json',
            ...(body !== undefined && {
              'content-type':
                req.contentType ??
                (req.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'),
              'content-length': Buffer.byteLength(body),
            }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              try {
                resolve((text ? JSON.parse(text) : {}) as T);
              } catch {
                reject(new Error(`${req.method} ${req.path}: unreadable JSON answer`));
              }
              return;
            }
            reject(statusError(req, status, text, retryAfterMs(res.headers['retry-after'])));
          });
        },
      );
      r.on('error', (err) => {
        if (signal.aborted && !req.signal?.aborted)
          reject(new Error(`${req.method} ${req.path}: no answer within ${timeoutMs} ms`));
        else reject(err);
      });
      r.end(body);
    });
  }

  return {
    async request<T>(req: KubeRequest): Promise<T> {
      const attempts = req.attempts ?? DEFAULT_ATTEMPTS;
      for (let attempt = 0; ; attempt++) {
        try {
          return await once<T>(req, await baseOptions());
        } catch (err) {
          if (req.signal?.aborted) throw abortReason(req.signal);
          const retryable = err instanceof KubeApiError ? isRetryableStatus(err.status) : true;
          if (!retryable || attempt + 1 >= attempts) throw err;
          const wait =
            (err instanceof KubeApiError ? err.retryAfterMs : null) ?? backoffDelay(attempt);
          await sleep(Math.max(wait, DEFAULT_BACKOFF.baseMs / 2), req.signal);
        }
      }
    },

    async watch(req: WatchRequest): Promise<void> {
      const options = await baseOptions();
      await new Promise<void>((resolve, reject) => {
        const r = (isHttps ? https : http).request(
          {
            ...options,
            method: 'GET',
            path: urlPath(req.path, { ...req.query, watch: true }),
            signal: req.signal,
            headers: { ...options.headers, accept: 'application/json' },
          },
          (res) => {
            const status = res.statusCode ?? 0;
            if (status !== 200) {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () =>
                reject(
                  statusError(
                    { method: 'GET', path: req.path },
                    status,
                    Buffer.concat(chunks).toString('utf8'),
                    retryAfterMs(res.headers['retry-after']),
                  ),
                ),
              );
              res.on('error', reject);
              return;
            }
            let pending = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              pending += chunk;
              let nl: number;
              while ((nl = pending.indexOf('\n')) >= 0) {
                const line = pending.slice(0, nl).trim();
                pending = pending.slice(nl + 1);
                if (!line) continue;
                let event: unknown;
                try {
                  event = JSON.parse(line);
                } catch {
                  r.destroy(new Error('unreadable watch event'));
                  return;
                }
                req.onEvent(event);
              }
            });
            res.on('end', () => resolve());
            res.on('error', reject);
            res.on('aborted', () => reject(new Error('watch aborted by the server')));
          },
        );
        // A watch that goes silent (half-open connection, a restarted server that never sent
        // FIN) is abandoned; the informer then resumes from its resourceVersion.
        r.setTimeout(req.idleTimeoutMs, () =>
          r.destroy(new Error(`watch idle for ${req.idleTimeoutMs} ms`)),
        );
        r.on('error', (err) => reject(req.signal.aborted ? abortReason(req.signal) : err));
        r.end();
      });
    },

    close() {
      agent?.destroy();
    },
  };
}

function statusError(
  req: Pick<KubeRequest, 'method' | 'path'>,
  status: number,
  text: string,
  retryAfter: number | null,
): KubeApiError {
  let reason = '';
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { reason?: string; message?: string };
    reason = parsed.reason ?? '';
    message = parsed.message ?? message;
  } catch {
    /* not a Status object */
  }
  return new KubeApiError(
    status,
    reason,
    `${req.method} ${req.path}: ${status} ${reason} ${message}`.trim(),
    retryAfter,
  );
}
