import {
  ListWatch,
  Watch,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Status,
} from '@kubernetes/client-node';
import { abortReason, backoffDelay, sleep } from './backoff.js';
import { KubeApiError, type ApiOptions, type KubeClient } from './client.js';

const WATCH_BACKOFF = { baseMs: 250, maxMs: 10_000 };

export interface InformerOptions<T extends KubernetesObject> {
  client: KubeClient;
  /** Collection path the watch follows, e.g. /api/v1/namespaces/ns/pods. */
  path: string;
  /** The namespace of the collection (the library's cache is keyed by namespace and name). */
  namespace: string;
  /** One list of the collection through a generated client (`options` as its last argument). */
  list(labelSelector: string | undefined, options: ApiOptions): Promise<KubernetesListObject<T>>;
  labelSelector?: string;
  /** Server-side watch duration before a planned resume (default 300 s). */
  watchSeconds?: number;
  /** Timeout of the list call (default 60 s: lists can be large). */
  listTimeoutMs?: number;
  /** Told about failures the loop recovers from (logging). */
  onError?: (err: unknown) => void;
}

export interface Informer<T extends KubernetesObject> {
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
 * startInformer keeps a cache of one collection with the library's ListWatch (list, then watch
 * from the list's resourceVersion; each watch resumes from the last version it saw; a 410 Gone
 * relists and reports the objects that vanished meanwhile as deletions). ListWatch stops at any
 * other failure and watches without bookmarks or a deadline, so this adds what the loop needs to
 * run unattended (see PacedWatch): failures — a restarted API server, 429, a silent connection —
 * restart it with capped, jittered backoff (Retry-After honoured for a failed list), and the
 * cache keeps serving its last state meanwhile.
 */
export function startInformer<T extends KubernetesObject>(
  options: InformerOptions<T>,
): Informer<T> {
  const { client, namespace } = options;
  const stopper = new AbortController();
  const waiters = new Map<string, Set<() => void>>();
  const stats = { lists: 0, watches: 0, errors: 0 };
  let failures = 0;
  let resolveSynced!: () => void;
  const syncedPromise = new Promise<void>((resolve) => (resolveSynced = resolve));

  const watch = new PacedWatch(client, {
    watchSeconds: options.watchSeconds ?? 300,
    stop: stopper.signal,
    onStart: () => {
      stats.watches++;
      // ListWatch opens a watch only once a list is in its cache.
      resolveSynced();
    },
    onEvent: () => (failures = 0),
    pace: () => backoffDelay(failures++, WATCH_BACKOFF),
  });
  const listWatch = new ListWatch<T>(
    options.path,
    watch,
    async () => {
      const list = await client.call(
        `list ${options.path}`,
        (o) => options.list(options.labelSelector, o),
        { timeoutMs: options.listTimeoutMs ?? 60_000, signal: stopper.signal },
      );
      stats.lists++;
      failures = 0;
      return list;
    },
    false,
    options.labelSelector,
  );

  const wake = (obj: T) => {
    for (const w of waiters.get(obj.metadata?.name ?? '') ?? []) w();
  };
  listWatch.on('change', wake);
  listWatch.on('error', (err: unknown) => {
    if (stopper.signal.aborted) return;
    stats.errors++;
    options.onError?.(err);
    const hinted = err instanceof KubeApiError ? err.retryAfterMs : null;
    void sleep(hinted ?? backoffDelay(failures++, WATCH_BACKOFF), stopper.signal).then(
      () => listWatch.start(),
      () => undefined,
    );
  });
  void listWatch.start();

  const get = (name: string) => listWatch.get(name, namespace);

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
    get,
    list: () => [...listWatch.list(namespace)],
    async waitFor(name, check, signal) {
      await this.synced(signal);
      return new Promise((resolve, reject) => {
        let set = waiters.get(name);
        if (!set) waiters.set(name, (set = new Set()));
        const done = () => {
          set.delete(recheck);
          if (set.size === 0) waiters.delete(name);
          signal.removeEventListener('abort', onAbort);
        };
        const recheck = () => {
          let value: ReturnType<typeof check>;
          try {
            value = check(get(name));
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
        set.add(recheck);
        recheck();
      });
    },
    async stop() {
      stopper.abort(new Error('informer stopped'));
      await listWatch.stop();
      watch.abortAll();
    },
  };
}

interface PacedWatchOptions {
  watchSeconds: number;
  stop: AbortSignal;
  onStart(): void;
  onEvent(): void;
  /** The delay before re-watching after a watch that ended at once and empty. */
  pace(): number;
}

/**
 * PacedWatch is the library's Watch with what ListWatch does not ask for: bookmarks (so a
 * resumed watch starts late enough not to hit 410 after a quiet period), a server-side deadline
 * (`timeoutSeconds`), and an idle timeout — a watch that goes silent (half-open connection, a
 * restarted server that never sent FIN) is abandoned and ListWatch resumes from its version.
 * An ERROR event ends the watch: 410 Gone/Expired relists, any other reaches the informer as a
 * failure (backed off). A watch the server ends at once with nothing in it (a proxy, an
 * overloaded server) is delayed like a failure instead of reopened in a tight loop. After the
 * informer stops no watch is opened and none outlives it.
 */
class PacedWatch extends Watch {
  private readonly open = new Set<AbortController>();

  constructor(
    client: KubeClient,
    private readonly options: PacedWatchOptions,
  ) {
    super(client.kubeconfig);
  }

  override async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const { stop, watchSeconds } = this.options;
    const idleMs = (watchSeconds + 30) * 1000;
    const startedAt = Date.now();
    let events = 0;
    let finished = false;
    // The request's controller, known once its answer started.
    const live: { controller?: AbortController } = {};
    let idle: NodeJS.Timeout | undefined;

    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      clearTimeout(idle);
      if (live.controller) {
        live.controller.abort();
        this.open.delete(live.controller);
      }
      if (!err && events === 0 && Date.now() - startedAt < 1000 && !stop.aborted) {
        void sleep(this.options.pace(), stop).then(
          () => done(null),
          () => done(null),
        );
        return;
      }
      done(err);
    };
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(new Error(`watch of ${path} idle for ${idleMs} ms`)), idleMs);
    };

    if (stop.aborted) {
      queueMicrotask(() => done(null));
      return new AbortController();
    }
    this.options.onStart();
    armIdle();
    const controller = await super.watch(
      path,
      { ...query, allowWatchBookmarks: true, timeoutSeconds: watchSeconds },
      (phase, obj, raw) => {
        if (finished) return;
        events++;
        armIdle();
        if (phase === 'ERROR') {
          const status = (obj ?? {}) as V1Status;
          const gone =
            status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone';
          finish(
            new KubeApiError(
              gone ? 410 : (status.code ?? 0),
              status.reason ?? 'WatchError',
              `watch of ${path}: ${status.message ?? 'error event'}`,
            ),
          );
          return;
        }
        // Only a healthy event resets the backoff (a server answering every watch with an
        // ERROR event must see it grow).
        this.options.onEvent();
        callback(phase, obj, raw);
      },
      finish,
    );
    live.controller = controller;
    if (finished || stop.aborted) controller.abort();
    else this.open.add(controller);
    return controller;
  }

  /** Ends every watch still open (ListWatch.stop misses one whose request is in flight). */
  abortAll() {
    for (const c of this.open) c.abort();
    this.open.clear();
  }
}
