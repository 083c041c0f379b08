// The pure half of an informer: how a list and watch events change the cache. Kept apart from
// the I/O loop so resume, bookmark and 410 handling are unit-tested without a server.

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string | Date;
    uid?: string;
  };
}

export interface KubeList<T> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

export interface InformerState<T extends KubeObject> {
  objects: Map<string, T>;
  /** Where the next watch resumes; '' before the first list. */
  resourceVersion: string;
}

/** A change the informer reports to its listeners (object undefined: it is gone). */
export interface CacheChange<T> {
  name: string;
  object: T | undefined;
}

export type WatchOutcome<T> =
  /** Applied; keep watching. */
  | { kind: 'applied'; changes: CacheChange<T>[] }
  /** The resourceVersion is too old (410 Gone / Expired): list again. */
  | { kind: 'relist' }
  /** The server reported another error in the stream: back off, then resume the watch. */
  | { kind: 'error'; code: number; message: string };

export const emptyState = <T extends KubeObject>(): InformerState<T> => ({
  objects: new Map(),
  resourceVersion: '',
});

/**
 * replaceFromList swaps the cache for a fresh list and reports what changed compared with the
 * old cache — objects deleted while no watch was running show up here as removals.
 */
export function replaceFromList<T extends KubeObject>(
  state: InformerState<T>,
  list: KubeList<T>,
): CacheChange<T>[] {
  const next = new Map<string, T>();
  for (const item of list.items) {
    const name = item.metadata?.name;
    if (name) next.set(name, item);
  }
  const changes: CacheChange<T>[] = [];
  for (const [name, object] of next) {
    const old = state.objects.get(name);
    if (old?.metadata?.resourceVersion !== object.metadata?.resourceVersion)
      changes.push({ name, object });
  }
  for (const name of state.objects.keys())
    if (!next.has(name)) changes.push({ name, object: undefined });
  state.objects = next;
  state.resourceVersion = list.metadata?.resourceVersion ?? '';
  return changes;
}

interface RawWatchEvent {
  type?: string;
  object?: KubeObject & { code?: number; message?: string; reason?: string };
}

/**
 * applyWatchEvent applies one watch event to the cache. ADDED/MODIFIED/DELETED move the
 * resourceVersion forward with the object; BOOKMARK moves it without an object (so a resumed
 * watch starts late enough not to hit 410 after a quiet period); ERROR 410 (or reason
 * Expired/Gone) asks for a relist, any other ERROR for a backed-off resume.
 */
export function applyWatchEvent<T extends KubeObject>(
  state: InformerState<T>,
  raw: unknown,
): WatchOutcome<T> {
  const event = (raw ?? {}) as RawWatchEvent;
  const object = event.object;
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const name = object?.metadata?.name;
      if (!name) return { kind: 'applied', changes: [] };
      if (object.metadata?.resourceVersion) state.resourceVersion = object.metadata.resourceVersion;
      if (event.type === 'DELETED') {
        state.objects.delete(name);
        return { kind: 'applied', changes: [{ name, object: undefined }] };
      }
      state.objects.set(name, object as T);
      return { kind: 'applied', changes: [{ name, object: object as T }] };
    }
    case 'BOOKMARK':
      if (object?.metadata?.resourceVersion)
        state.resourceVersion = object.metadata.resourceVersion;
      return { kind: 'applied', changes: [] };
    case 'ERROR': {
      const code = object?.code ?? 0;
      if (code === 410 || object?.reason === 'Expired' || object?.reason === 'Gone')
        return { kind: 'relist' };
      return { kind: 'error', code, message: object?.message ?? 'watch error' };
    }
    default:
      return { kind: 'error', code: 0, message: `unknown watch event type ${String(event.type)}` };
  }
}
