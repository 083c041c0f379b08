// List + watch, the way a kubelet follows its objects: list (to learn every current object and a
// resourceVersion), then watch from that version; whenever the watch ends (API server restart,
// timeout, "410 Gone") list again. Each list is handed over whole so the caller can also notice
// objects that disappeared while no watch was open.
import { setTimeout as sleep } from 'node:timers/promises';
import { Watch, type KubeConfig } from '@kubernetes/client-node';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface InformerOptions<T> {
  kubeconfig: KubeConfig;
  /** The collection's URL path, e.g. /api/v1/namespaces/ns/pods. */
  path: string;
  list(): Promise<{ items: T[]; resourceVersion: string | undefined }>;
  /** Every object of a fresh list (also after a reconnect). */
  onList(items: T[]): void;
  onEvent(type: WatchEventType, object: T): void;
  onError?(error: unknown): void;
}

export interface Informer {
  /** Resolves after the first list was handed to onList. */
  readonly synced: Promise<void>;
  stop(): void;
}

/** startInformer runs the list/watch loop until stop(). */
export function startInformer<T>(options: InformerOptions<T>): Informer {
  const watch = new Watch(options.kubeconfig);
  let isStopped = false;
  let current: AbortController | undefined;
  let markSynced: () => void = () => {};
  const synced = new Promise<void>((resolve) => (markSynced = resolve));

  const watchOnce = (resourceVersion: string | undefined) =>
    new Promise<void>((resolve) => {
      const query = { resourceVersion, allowWatchBookmarks: true };
      watch
        .watch(
          options.path,
          query,
          (type: string, object: T) => {
            // ERROR carries a Status (e.g. 410 Gone: our version is too old); relist.
            if (type === 'ERROR') current?.abort();
            else if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
              options.onEvent(type, object);
            }
          },
          () => resolve(),
        )
        .then((controller) => {
          current = controller;
          if (isStopped) controller.abort();
        })
        .catch(() => resolve());
    });

  void (async () => {
    while (!isStopped) {
      try {
        const { items, resourceVersion } = await options.list();
        if (isStopped) break;
        options.onList(items);
        markSynced();
        await watchOnce(resourceVersion);
      } catch (error) {
        options.onError?.(error);
      }
      if (!isStopped) await sleep(250);
    }
  })();

  return {
    synced,
    stop: () => {
      isStopped = true;
      current?.abort();
    },
  };
}
