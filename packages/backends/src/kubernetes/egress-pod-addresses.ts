import type { V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '../kube/client.js';
import { startInformer, type Informer } from '../kube/informer.js';
import { LABELS, MANAGED_SELECTOR } from '../kube/names.js';
import { podsPath } from './kubernetes-backend.js';
import { isPodLive } from './pod-status.js';

export interface PodAddressBook {
  /** The sandbox whose live Pod has `ip` now; null for any other address. */
  sandboxOf(ip: string): string | null;
  /** Resolves once the first list is in the cache. */
  synced(signal?: AbortSignal): Promise<void>;
  /** The informer behind it (tests read its stats). */
  readonly informer: Informer<V1Pod>;
  stop(): Promise<void>;
}

/** How long an address index is reused before it is rebuilt from the informer's cache. */
const INDEX_TTL_MS = 500;
const MISS_REBUILD_MS = 50;

/**
 * startPodAddressBook names sandboxes by Pod IP for the Kubernetes egress point: an informer on
 * the sandbox namespace's Pods (this installation's, by label), indexed by every address in
 * status.podIPs. A Pod being deleted or finished names nothing (its IP may be handed to another
 * Pod). An unknown address rebuilds the index at once (a Pod that just started).
 */
export function startPodAddressBook(options: {
  client: KubeClient;
  namespace: string;
  onWarning?: (msg: string, err: unknown) => void;
}): PodAddressBook {
  const { client, namespace } = options;
  const informer = startInformer<V1Pod>({
    client,
    path: podsPath(namespace),
    namespace,
    list: (labelSelector, o) => client.core.listNamespacedPod({ namespace, labelSelector }, o),
    labelSelector: MANAGED_SELECTOR,
    onError: (err) => options.onWarning?.('egress point: Pod watch restarted', err),
  });
  let index = new Map<string, string>();
  let builtAt = 0;
  const rebuild = () => {
    const next = new Map<string, string>();
    for (const pod of informer.list()) {
      const sandboxId = pod.metadata?.labels?.[LABELS.sandbox];
      if (!sandboxId || !isPodLive(pod)) continue;
      const ips = pod.status?.podIPs?.map((p) => p.ip) ?? [];
      for (const ip of ips.length > 0 ? ips : [pod.status?.podIP]) if (ip) next.set(ip, sandboxId);
    }
    index = next;
    builtAt = Date.now();
  };
  return {
    sandboxOf(ip) {
      if (Date.now() - builtAt > INDEX_TTL_MS) rebuild();
      let found = index.get(ip);
      // A miss rebuilds (a Pod that just started), at most every MISS_REBUILD_MS.
      if (found === undefined && Date.now() - builtAt > MISS_REBUILD_MS) {
        rebuild();
        found = index.get(ip);
      }
      return found ?? null;
    },
    synced: (signal) => informer.synced(signal),
    informer,
    stop: () => informer.stop(),
  };
}
