import http from 'node:http';
import https from 'node:https';
import {
  ApiException,
  CoreV1Api,
  Observable,
  CustomObjectsApi,
  NetworkingV1Api,
  setHeaderOptions,
  type ConfigurationOptions,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
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

  /** The status under the name the library uses (ApiException, and ListWatch's 410 check). */
  get code(): number {
    return this.status;
  }
}

export const isNotFound = (err: unknown) => err instanceof KubeApiError && err.status === 404;
export const isConflict = (err: unknown) => err instanceof KubeApiError && err.status === 409;
export const isGone = (err: unknown) => err instanceof KubeApiError && err.status === 410;

/** Per-attempt options a call hands to a generated API method (signal, shared agent). */
export type ApiOptions = ConfigurationOptions;

export interface CallOptions {
  /** Per attempt; DEFAULT_TIMEOUT_MS by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Attempts for 429/5xx/network errors (1 = no retry). */
  attempts?: number;
}

export interface KubeClient {
  readonly kubeconfig: KubeConfig;
  /** Generated clients (`kubeconfig.makeApiClient`); call them through `call`. */
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly networking: NetworkingV1Api;
  /**
   * call runs one API call: `fn` gets the options to pass as the method's last argument. `what`
   * names the call in errors ("create Pod x").
   */
  call<T>(what: string, fn: (options: ApiOptions) => Promise<T>, options?: CallOptions): Promise<T>;
  close(): void;
}

export const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_ATTEMPTS = 4;

/** withContentType: the options of a PATCH with this patch strategy (the library's default is JSON patch). */
export const withContentType = (contentType: string, options: ApiOptions): ApiOptions =>
  setHeaderOptions('Content-Type', contentType, options) as ApiOptions;

/**
 * createKubeClient wraps the generated clients of @kubernetes/client-node (credentials from the
 * KubeConfig: kubeconfig, in-cluster token, exec plugins, applied per request so rotating tokens
 * work). What the generated clients leave to the caller is added here: every call has a
 * timeout, honours an AbortSignal, and retries overload (429 with Retry-After) and server or
 * network errors with capped, jittered backoff. The library makes a new http(s).Agent for every
 * request (a TCP and TLS handshake each time); calls share one keep-alive agent instead.
 */
export function createKubeClient(kc: KubeConfig): KubeClient {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no current Kubernetes cluster');
  let agent: Promise<http.Agent | undefined> | null = null;

  const sharedAgent = () =>
    (agent ??= (async () => {
      // Behind a proxy the library's own (proxy) agent is kept.
      if (cluster.proxyUrl) return undefined;
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return cluster.server.startsWith('https:')
        ? new https.Agent({
            keepAlive: true,
            ca: opts.ca,
            cert: opts.cert,
            key: opts.key,
            pfx: opts.pfx,
            passphrase: opts.passphrase,
            servername: cluster.tlsServerName ?? opts.servername,
            rejectUnauthorized: opts.rejectUnauthorized ?? true,
          })
        : new http.Agent({ keepAlive: true });
    })());

  const attemptOptions = (signal: AbortSignal): ApiOptions => ({
    middleware: [
      {
        pre: (ctx: RequestContext) =>
          new Observable(
            sharedAgent().then((shared) => {
              if (shared) ctx.setAgent(shared);
              ctx.setSignal(signal);
              return ctx;
            }),
          ),
        post: (rsp: ResponseContext) => new Observable(Promise.resolve(rsp)),
      },
    ],
    middlewareMergeStrategy: 'append',
  });

  async function once<T>(
    what: string,
    fn: (options: ApiOptions) => Promise<T>,
    timeoutMs: number,
    outer: AbortSignal | undefined,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outer ? AbortSignal.any([outer, timeout]) : timeout;
    try {
      return await fn(attemptOptions(signal));
    } catch (err) {
      if (err instanceof ApiException) throw toKubeApiError(what, err);
      if (outer?.aborted) throw abortReason(outer);
      if (timeout.aborted) throw new Error(`${what}: no answer within ${timeoutMs} ms`);
      throw err;
    }
  }

  return {
    kubeconfig: kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    networking: kc.makeApiClient(NetworkingV1Api),

    async call<T>(
      what: string,
      fn: (options: ApiOptions) => Promise<T>,
      options: CallOptions = {},
    ) {
      const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
      const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      for (let attempt = 0; ; attempt++) {
        try {
          return await once(what, fn, timeoutMs, options.signal);
        } catch (err) {
          if (options.signal?.aborted) throw abortReason(options.signal);
          const retryable = err instanceof KubeApiError ? isRetryableStatus(err.status) : true;
          if (!retryable || attempt + 1 >= attempts) throw err;
          const wait =
            (err instanceof KubeApiError ? err.retryAfterMs : null) ?? backoffDelay(attempt);
          await sleep(Math.max(wait, DEFAULT_BACKOFF.baseMs / 2), options.signal);
        }
      }
    },

    close() {
      void agent?.then((a) => a?.destroy());
    },
  };
}

/**
 * toKubeApiError keeps what an ApiException's Status says (code, reason, message, Retry-After)
 * and drops the rest: its message embeds the whole body and the response headers.
 */
export function toKubeApiError(what: string, err: ApiException<unknown>): KubeApiError {
  let reason = '';
  let message = typeof err.body === 'string' ? err.body.slice(0, 300) : '';
  if (typeof err.body === 'string') {
    try {
      const parsed = JSON.parse(err.body) as { reason?: string; message?: string };
      reason = parsed.reason ?? '';
      message = parsed.message ?? message;
    } catch {
      /* not a Status object */
    }
  }
  const headers = err.headers ?? {};
  const retryAfter = headers['retry-after'] ?? headers['Retry-After'];
  return new KubeApiError(
    err.code,
    reason,
    `${what}: ${err.code} ${reason} ${message}`.trim(),
    retryAfterMs(retryAfter),
  );
}
