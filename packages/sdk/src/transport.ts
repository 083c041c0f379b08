import { readClientEnv } from './env.js';
import { CubicleError } from './errors.js';
import { routeTable, type RouteInfo } from './generated/routes.js';
import type { BodyOf, ItemOf, OperationName, ParamsOf, QueryOf, ResponseOf } from './operations.js';
import {
  backoffMs,
  DEFAULT_RETRY,
  RETRYABLE_STATUSES,
  retryAfterMs,
  sleep,
  type RetryOptions,
} from './retry.js';
import { consoleLogger, redactUrl, type Logger } from './logger.js';
import { USER_AGENT } from './version.js';

/** DEFAULT_BASE_URL is a Cubicle on this machine (`npm start`), as in the Python SDK and the CLI. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/** ClientOptions configure one client; every call may override timeout, retries and signal. */
export interface ClientOptions {
  /**
   * The API's base URL, e.g. `https://cubicle.example.com` (no `/v1`). Default: `$CUBICLE_URL`,
   * else `http://127.0.0.1:8080`.
   */
  baseUrl?: string;
  /**
   * An API key (`cbk_…`). Default: `$CUBICLE_API_KEY`. `null` sends no credentials (viewer
   * ticket introspection needs none).
   */
  apiKey?: string | null;
  /** Bound of one attempt in ms (default 130 s: a claim may wait up to 120 s for a desktop). */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** A fetch to use instead of the global one (tests, proxies, Next's fetch options). */
  fetch?: typeof fetch;
  /** Extra `RequestInit` fields for every request, e.g. Next's `{ cache: 'no-store' }`. */
  init?: Omit<RequestInit, 'method' | 'headers' | 'body' | 'signal'>;
  /**
   * Receives one debug line per HTTP attempt (method, redacted URL, status, duration, request
   * id; never keys or bodies). Default: console.debug when `$CUBICLE_LOG` is `debug`, else none.
   */
  logger?: Logger | null;
}

/** CallOptions apply to one call (and to every retry of it). */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** The Idempotency-Key to send; by default one is made per call and kept across its retries. */
  idempotencyKey?: string;
  /** `false`: one attempt only. */
  retry?: Partial<RetryOptions> | false;
}

/** OperationInput is what one call sends: path parameters, query and body, all typed by the contract. */
export type OperationInput<K extends OperationName> = {
  params?: ParamsOf<K>;
  query?: QueryOf<K>;
  body?: BodyOf<K>;
  headers?: Record<string, string>;
};

/**
 * RETRY_SAFE_POSTS are POSTs that only read or whose repetition changes nothing: they are
 * retried like GETs. Any other POST without server-side idempotency (a click, a shell command,
 * stdin) is retried only when it certainly never ran: a 429 from the rate limiter, which answers
 * before any handler, or a connection that was refused.
 */
const RETRY_SAFE_POSTS: ReadonlySet<OperationName> = new Set<OperationName>([
  'heartbeatClaim',
  'observeClaim',
  'verifyClaim',
  'screenshotClaim',
  'readClaimFile',
  'listClaimFiles',
  'statClaimFile',
  'introspectViewerTicket',
  'cancelRun',
]);

/** isRetrySafe tells whether a call may be repeated after an answer that may have come after it ran. */
export function isRetrySafe(name: OperationName): boolean {
  const route: RouteInfo = routeTable[name];
  return route.method !== 'POST' || route.idempotencyKey || RETRY_SAFE_POSTS.has(name);
}

const PATH_PARAM = /\{([a-zA-Z_]+)\}/g;

/**
 * Transport sends one operation of the route table: it fills the path from the route's
 * definition, sends the body as JSON, retries with backoff and jitter, and turns error
 * envelopes into CubicleError. It is the only place the SDK touches fetch.
 */
export class Transport {
  readonly baseUrl: string;
  readonly #apiKey: string | null;
  readonly #timeoutMs: number;
  readonly #retry: RetryOptions;
  readonly #fetch: typeof fetch;
  readonly #init: ClientOptions['init'];
  readonly #logger: Logger | null;

  constructor(options: ClientOptions = {}) {
    const env = readClientEnv();
    this.baseUrl = (options.baseUrl ?? env.url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#apiKey = options.apiKey === undefined ? (env.apiKey ?? null) : options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 130_000;
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#init = options.init;
    this.#logger =
      options.logger === undefined
        ? env.log?.toLowerCase() === 'debug'
          ? consoleLogger
          : null
        : options.logger;
  }

  /** url builds an operation's URL; a missing path parameter is a programming error. */
  url<K extends OperationName>(name: K, input: OperationInput<K> = {}): string {
    const params = (input.params ?? {}) as Record<string, string>;
    const path = routeTable[name].path.replace(PATH_PARAM, (_m, key: string) => {
      const value = params[key];
      if (value === undefined) throw new TypeError(`${name}: path parameter ${key} is missing`);
      return encodeURIComponent(value);
    });
    const query = input.query as Record<string, unknown> | undefined;
    if (!query) return this.baseUrl + path;
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== null) search.set(key, String(value));
    }
    const qs = search.toString();
    return qs ? `${this.baseUrl}${path}?${qs}` : this.baseUrl + path;
  }

  /** call sends an operation and returns its parsed JSON answer (undefined for 204). */
  async call<K extends OperationName>(
    name: K,
    input: OperationInput<K> = {},
    options: CallOptions = {},
  ): Promise<ResponseOf<K>> {
    const response = await this.send(name, input, options, 'application/json');
    if (response.status === 204) return undefined as ResponseOf<K>;
    return (await response.json()) as ResponseOf<K>;
  }

  /** paginate walks a list operation page by page, following `next_cursor`. */
  async *paginate<K extends OperationName>(
    name: K,
    input: OperationInput<K> = {},
    options: CallOptions = {},
  ): AsyncGenerator<ItemOf<K>, void, undefined> {
    let cursor: string | undefined = (input.query as { cursor?: string } | undefined)?.cursor;
    for (;;) {
      const query = { ...input.query, ...(cursor ? { cursor } : {}) } as QueryOf<K>;
      const page = (await this.call(name, { ...input, query }, options)) as unknown as {
        data: ItemOf<K>[];
        next_cursor: string | null;
      };
      yield* page.data;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /**
   * send performs the request with retries and returns the successful Response unread (binary
   * bodies and event streams read it themselves); non-2xx answers become CubicleError.
   */
  async send<K extends OperationName>(
    name: K,
    input: OperationInput<K>,
    options: CallOptions,
    accept: string,
  ): Promise<Response> {
    const route = routeTable[name];
    const url = this.url(name, input);
    const headers: Record<string, string> = { accept, 'user-agent': USER_AGENT, ...input.headers };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    let body: string | undefined;
    if (input.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(input.body);
    }
    // One key per call, the same on every retry: the server answers a repeat with the first result.
    if (route.method !== 'GET') headers['idempotency-key'] = options.idempotencyKey ?? newKey();
    const retry =
      options.retry === false
        ? { ...this.#retry, maxRetries: 0 }
        : { ...this.#retry, ...options.retry };
    const isSafe = isRetrySafe(name);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;

    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < retry.maxRetries;
      // Infinity: no bound (event streams last as long as their run).
      const timeout = Number.isFinite(timeoutMs) ? AbortSignal.timeout(timeoutMs) : undefined;
      const signal = signalOf(options.signal, timeout);
      let response: Response;
      const startedAt = performance.now();
      try {
        response = await this.#fetch(url, {
          ...this.#init,
          method: route.method,
          headers,
          body,
          signal,
        });
      } catch (cause) {
        this.#log(name, route.method, url, attempt, startedAt, { error: String(cause) });
        if (options.signal?.aborted) throw options.signal.reason;
        const error = transportError(name, cause, timeout?.aborted === true, timeoutMs);
        // A refused connection never reached the server: even an unsafe call may go again.
        if (canRetry && (isSafe || isConnectionRefused(cause))) {
          await sleep(backoffMs(attempt, retry), options.signal);
          continue;
        }
        throw error;
      }
      this.#log(name, route.method, url, attempt, startedAt, {
        status: response.status,
        requestId: response.headers.get('x-request-id'),
      });
      if (response.ok) return response;
      const error = CubicleError.fromEnvelope(
        response.status,
        await response.json().catch(() => null),
        response.headers.get('x-request-id'),
      );
      // The API names one 4xx as "retry later": the first request with this key is still running.
      if (canRetry && error.code === 'idempotency_in_progress') {
        await sleep(backoffMs(attempt, retry), options.signal);
        continue;
      }
      if (canRetry && RETRYABLE_STATUSES.has(response.status)) {
        const isRateLimit = response.status === 429 && error.code === 'rate_limited';
        if (isSafe || isRateLimit) {
          const after = retryAfterMs(response.headers.get('retry-after'));
          // quota_exceeded is also 429, but waiting does not free a quota unless the server says so;
          // a Retry-After longer than the caller's maxDelayMs is theirs to decide on, not a retry.
          const isWorthWaiting = response.status !== 429 || isRateLimit || after !== null;
          if (isWorthWaiting && (after === null || after <= retry.maxDelayMs)) {
            await sleep(after ?? backoffMs(attempt, retry), options.signal);
            continue;
          }
        }
      }
      throw error;
    }
  }

  #log(
    operation: string,
    method: string,
    url: string,
    attempt: number,
    startedAt: number,
    outcome: { status?: number; requestId?: string | null; error?: string },
  ): void {
    if (!this.#logger) return;
    const durationMs = Math.round(performance.now() - startedAt);
    const shown = redactUrl(url);
    const what = outcome.status === undefined ? `failed: ${outcome.error}` : String(outcome.status);
    this.#logger.debug(`${method} ${shown} -> ${what} (${durationMs} ms)`, {
      operation,
      method,
      url: shown,
      attempt: attempt + 1,
      durationMs,
      ...outcome,
    });
  }
}

function signalOf(user: AbortSignal | undefined, timeout: AbortSignal | undefined) {
  if (user && timeout) return AbortSignal.any([user, timeout]);
  return user ?? timeout;
}

function newKey(): string {
  return `sdk-${globalThis.crypto.randomUUID()}`;
}

function isConnectionRefused(cause: unknown): boolean {
  const code = (cause as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'ECONNREFUSED';
}

function transportError(name: string, cause: unknown, isTimeout: boolean, timeoutMs: number) {
  return isTimeout
    ? new CubicleError({
        code: 'request_timeout',
        message: `${name}: no answer within ${timeoutMs} ms`,
        status: 0,
        cause,
      })
    : new CubicleError({
        code: 'connection_failed',
        message: `${name}: ${(cause as Error)?.message ?? 'the connection failed'}`,
        status: 0,
        cause,
      });
}
