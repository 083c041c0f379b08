import { abortReason, backoffDelay, sleep } from './backoff.js';
import { isGone, KubeApiError, type KubeClient } from './client.js';
import {
  applyWatchEvent,
  emptyState,
  replaceFromList,
  type CacheChange,
  type KubeList,
  type KubeObject,
} from './informer-state.js';

const WATCH_BACKOFF = { baseMs: 250, maxMs: 10_000 };

export interface InformerOptions {
  client: KubeClient;
  /** Collection path, e.g. /api/v1/namespaces/ns/pods. */
  path: string;
  labelSelector?: string;
  /** Server-side watch duration before a planned resume (default 300 s). */
  watchSeconds?: number;
  /** Timeout of the list call (default 60 s: lists can be large). */
  listTimeoutMs?: number;
  /** Told about failures the loop recovers from (logging). */
  onError?: (err: unknown) => void;
}

export interface Informer<T extends KubeObject> {
  /** Resolves once the first list is in the cache. */
  synced(signal?: AbortSignal): Promise<void>;
  get(name: string): T | undefined;
  list(): T[];
  /** Resolves with the first value `check` returns that is not undefined, re-checked on every change. */
  waitFor<R>(
    name: string,
    check: (obj: T | undefined) => R | undefined,
    signal: AbortSignal,
  ): Promise<R>;
  /** Lists and watches; also counts restarts so tests and metrics can see recoveries. */
  readonly stats: { lists: number; watches: number; errors: number };
  stop(): Promise<void>;
}

/**
 * startInformer keeps a cache of one collection with list + watch: each watch resumes from the
 * last resourceVersion it saw (bookmarks included), a 410 Gone relists (and reports the
 * objects that vanished meanwhile), and any other failure — a restarted API server, 429, a
 * silent connection — is retried with capped, jittered backoff. The cache keeps serving its
 * last state while the loop recovers.
 */
export function startInformer<T extends KubeObject>(options: InformerOptions): Informer<T> {
  const state = emptyState<T>();
  const stopper = new AbortController();
  const waiters = new Map<string, Set<() => void>>();
  const stats = { lists: 0, watches: 0, errors: 0 };
  const watchSeconds = options.watchSeconds ?? 300;
  let resolveSynced!: () => void;
  const syncedPromise = new Promise<void>((resolve) => (resolveSynced = resolve));

  const notify = (changes: CacheChange<T>[]) => {
    for (const change of changes) for (const wake of waiters.get(change.name) ?? []) wake();
  };

  async function relist(): Promise<void> {
    const list = await options.client.request<KubeList<T>>({
      method: 'GET',
      path: options.path,
      query: { labelSelector: options.labelSelector },
      timeoutMs: options.listTimeoutMs ?? 60_000,
      signal: stopper.signal,
    });
    stats.lists++;
    notify(replaceFromList(state, list));
    resolveSynced();
  }

  async function watchOnce(): Promise<'resume' | 'relist' | 'idle'> {
    const watchAbort = new AbortController();
    const startedAt = Date.now();
    // Written by the event callback while the stream runs.
    const seen = { events: 0, relist: false, error: null as Error | null };
    stats.watches++;
    try {
      await options.client.watch({
        path: options.path,
        query: {
          labelSelector: options.labelSelector,
          resourceVersion: state.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: watchSeconds,
        },
        idleTimeoutMs: (watchSeconds + 30) * 1000,
        signal: AbortSignal.any([stopper.signal, watchAbort.signal]),
        onEvent: (event) => {
          seen.events++;
          const result = applyWatchEvent(state, event);
          if (result.kind === 'applied') notify(result.changes);
          else {
            if (result.kind === 'relist') seen.relist = true;
            else seen.error = new KubeApiError(result.code, 'WatchError', result.message);
            watchAbort.abort(new Error('watch ended by an error event'));
          }
        },
      });
    } catch (err) {
      if (!watchAbort.signal.aborted || stopper.signal.aborted) throw err;
    }
    if (seen.error) throw seen.error;
    if (seen.relist) return 'relist';
    // A watch the server ends at once with nothing in it (a proxy, an overloaded server) must
    // not turn the loop into a tight spin: it is backed off like a failure.
    return seen.events === 0 && Date.now() - startedAt < 1000 ? 'idle' : 'resume';
  }

  const loop = (async () => {
    let needList = true;
    let failures = 0;
    while (!stopper.signal.aborted) {
      try {
        if (needList) {
          await relist();
          needList = false;
        }
        const outcome = await watchOnce();
        needList = outcome === 'relist';
        if (outcome === 'idle')
          await sleep(backoffDelay(failures++, WATCH_BACKOFF), stopper.signal).catch(
            () => undefined,
          );
        else failures = 0;
      } catch (err) {
        if (stopper.signal.aborted) break;
        stats.errors++;
        options.onError?.(err);
        if (isGone(err)) needList = true;
        const hinted = err instanceof KubeApiError ? err.retryAfterMs : null;
        await sleep(hinted ?? backoffDelay(failures++, WATCH_BACKOFF), stopper.signal).catch(
          () => undefined,
        );
      }
    }
  })();

  return {
    stats,
    async synced(signal) {
      if (!signal) return syncedPromise;
      if (signal.aborted) throw abortReason(signal);
      await Promise.race([
        syncedPromise,
        new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(abortReason(signal)), { once: true }),
        ),
      ]);
    },
    get: (name) => state.objects.get(name),
    list: () => [...state.objects.values()],
    async waitFor(name, check, signal) {
      await this.synced(signal);
      return new Promise((resolve, reject) => {
        let set = waiters.get(name);
        if (!set) waiters.set(name, (set = new Set()));
        const done = () => {
          set.delete(wake);
          if (set.size === 0) waiters.delete(name);
          signal.removeEventListener('abort', onAbort);
        };
        const wake = () => {
          let value: ReturnType<typeof check>;
          try {
            value = check(state.objects.get(name));
          } catch (err) {
            done();
            reject(err);
            return;
          }
          if (value !== undefined) {
            done();
            resolve(value);
          }
        };
        const onAbort = () => {
          done();
          reject(abortReason(signal));
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        set.add(wake);
        wake();
      });
    },
    async stop() {
      stopper.abort(new Error('informer stopped'));
      await loop;
    },
  };
}
