import type { ProvisionInput, ProvisionedSandbox, SandboxBackend } from '@cubicle/control-plane';
import {
  PatchStrategy,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  isConflict,
  isNotFound,
  withContentType,
  type ApiOptions,
  type KubeClient,
} from './client.js';
import {
  deleteGuestSecret,
  deleteIfPresent,
  ensureGuestSecret,
  getIfPresent,
} from './kube-objects.js';
import { guestUrlOf, vncEndpointOf, waitForGuestHealthy } from './guest-health.js';
import { startInformer, type Informer } from './informer.js';
import {
  buildSandboxNetworkPolicy,
  NETWORK_POLICY_NAME,
  type NetworkPolicyOptions,
} from './network-policy.js';
import { LABELS, MANAGED_SELECTOR, sandboxIdOfObjectName, sandboxObjectName } from './names.js';
import { mergePlacement, placementFromPool, type Placement } from './placement.js';
import type { SandboxTemplate } from './template.js';

export type Readiness =
  | { kind: 'ready'; ip: string }
  | { kind: 'waiting'; why: string }
  | { kind: 'failed'; why: string };

/** The calls on one namespace's collection of sandbox objects (a generated client's methods). */
export interface SandboxObjectApi<T extends KubernetesObject> {
  /** The collection's URL path (the informer's watch follows it). */
  path: string;
  list(labelSelector: string | undefined, options: ApiOptions): Promise<KubernetesListObject<T>>;
  create(obj: T, options: ApiOptions): Promise<unknown>;
  read(name: string, options: ApiOptions): Promise<T>;
  /** Deletes with background propagation. */
  delete(name: string, options: ApiOptions): Promise<unknown>;
  /** JSON merge patch (set the content type with `mergePatch`). */
  patch(name: string, body: object, options: ApiOptions): Promise<unknown>;
}

/** mergePatch: the options of a JSON merge patch (RFC 7386). */
export const mergePatch = (options: ApiOptions) =>
  withContentType(PatchStrategy.MergePatch, options);

/** What differs between a Pod and a VMI; the lifecycle around them is shared. */
export interface SandboxObjectKind<T extends KubernetesObject> {
  backend: 'kubernetes' | 'kubevirt';
  /** Human name for errors ("Pod", "VMI"). */
  noun: string;
  api(client: KubeClient, namespace: string): SandboxObjectApi<T>;
  build(template: SandboxTemplate, namespace: string): T;
  /** Secret keys besides `token` (a VM's cloud-init user data). */
  secretExtras(template: SandboxTemplate, token: string): Record<string, string>;
  readiness(obj: T | undefined): Readiness;
  isLive(obj: T): boolean;
}

export interface KubeBackendOptions {
  client: KubeClient;
  namespace: string;
  /** Operator defaults under every pool's own placement. */
  placement?: Placement;
  /** Applied to the namespace at start when given (see buildSandboxNetworkPolicy). */
  networkPolicy?: Omit<NetworkPolicyOptions, 'namespace'>;
  /** Recoverable failures (watch restarts, sweeps); never given secrets. */
  onWarning?: (msg: string, err: unknown) => void;
  /** How long list() waits for the first informer sync. */
  syncTimeoutMs?: number;
}

/** KubeSandboxBackend adds what Kubernetes-backed sandboxes can do beyond SandboxBackend. */
export interface KubeSandboxBackend extends SandboxBackend {
  markClaimed(sandboxId: string): Promise<void>;
  /** The informer behind list() (tests and metrics read its stats). */
  informer(): Promise<Informer<KubernetesObject>>;
  close(): Promise<void>;
}

// A Secret whose Pod/VMI never appeared is an orphan once it is older than any provisioning run.
const ORPHAN_SECRET_AGE_MS = 15 * 60_000;
const ORPHAN_SWEEP_INTERVAL_MS = 60_000;

/**
 * createKubeSandboxBackend runs each sandbox as one object (Pod or VMI) plus its guest Secret in
 * one namespace. It keeps no state of its own: names derive from sandbox ids, so a restarted
 * worker re-running a provisioning job adopts what the crashed one created, and list() reads an
 * informer cache (list + watch) instead of asking the API server on every reconcile.
 */
export function createKubeSandboxBackend<T extends KubernetesObject>(
  kind: SandboxObjectKind<T>,
  options: KubeBackendOptions,
): KubeSandboxBackend {
  const { client, namespace } = options;
  const api = kind.api(client, namespace);
  const what = (name: string) => `${kind.noun} ${namespace}/${name}`;
  const readObject = (name: string, signal?: AbortSignal) =>
    getIfPresent(client, what(name), (o) => api.read(name, o), signal);
  const deleteObject = (name: string, signal?: AbortSignal) =>
    deleteIfPresent(client, what(name), (o) => api.delete(name, o), signal);
  const warn = options.onWarning ?? (() => undefined);
  let setup: Promise<Informer<T>> | null = null;
  let lastOrphanSweep = 0;

  const ensureSetup = () => {
    setup ??= (async () => {
      if (options.networkPolicy) {
        const policy = buildSandboxNetworkPolicy({ ...options.networkPolicy, namespace });
        // Server-side apply: creates or updates in one idempotent call.
        await client.call(`apply NetworkPolicy ${namespace}/${NETWORK_POLICY_NAME}`, (o) =>
          client.networking.patchNamespacedNetworkPolicy(
            {
              name: NETWORK_POLICY_NAME,
              namespace,
              body: policy,
              fieldManager: 'cubicle',
              force: true,
            },
            withContentType(PatchStrategy.ServerSideApply, o),
          ),
        );
      }
      return startInformer<T>({
        client,
        path: api.path,
        namespace,
        list: (labelSelector, o) => api.list(labelSelector, o),
        labelSelector: MANAGED_SELECTOR,
        onError: (err) => warn(`${kind.noun} watch restarted`, err),
      });
    })().catch((err: unknown) => {
      setup = null;
      throw err;
    });
    return setup;
  };

  async function createOrAdopt(obj: T, secretIsNew: boolean, signal: AbortSignal): Promise<void> {
    const name = obj.metadata?.name as string;
    const informer = await ensureSetup();
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await client.call(`create ${what(name)}`, (o) => api.create(obj, o), { signal });
        return;
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
      const existing = await readObject(name, signal);
      if (!existing) continue;
      // Adopt a live object of a crashed run, unless its Secret was just made anew (the object
      // would carry a token nobody knows) or it is already on its way out.
      if (!secretIsNew && kind.isLive(existing)) return;
      if (!existing.metadata?.deletionTimestamp) await deleteObject(name, signal);
      await informer.waitFor(name, (o) => (o === undefined ? true : undefined), signal);
    }
    throw new Error(`could not create or adopt ${kind.noun} ${name}`);
  }

  async function sweepOrphanSecrets(informer: Informer<T>): Promise<void> {
    const now = Date.now();
    if (now - lastOrphanSweep < ORPHAN_SWEEP_INTERVAL_MS) return;
    lastOrphanSweep = now;
    const secrets = await client.call(`list Secrets in ${namespace}`, (o) =>
      client.core.listNamespacedSecret({ namespace, labelSelector: MANAGED_SELECTOR }, o),
    );
    for (const secret of secrets.items) {
      const sandboxId = secret.metadata?.labels?.[LABELS.sandbox];
      const created = new Date(secret.metadata?.creationTimestamp ?? now).getTime();
      if (!sandboxId || now - created < ORPHAN_SECRET_AGE_MS) continue;
      let objectName: string;
      try {
        objectName = sandboxObjectName(sandboxId);
      } catch {
        continue;
      }
      if (informer.get(objectName)) continue;
      await deleteGuestSecret(client, namespace, sandboxId);
    }
  }

  return {
    kind: kind.backend,

    async provision(input: ProvisionInput): Promise<ProvisionedSandbox> {
      const { signal } = input;
      const informer = await ensureSetup();
      const template: SandboxTemplate = {
        sandboxId: input.sandboxId,
        tenantId: input.tenantId,
        poolId: input.poolId,
        image: input.image,
        cpuMillis: input.cpuMillis,
        memoryMb: input.memoryMb,
        env: input.env,
        placement: mergePlacement(options.placement, placementFromPool(input.kubernetes)),
      };
      const name = sandboxObjectName(input.sandboxId);
      const secret = await ensureGuestSecret(
        client,
        namespace,
        input,
        (token) => kind.secretExtras(template, token),
        signal,
      );
      await createOrAdopt(kind.build(template, namespace), secret.created, signal);
      let seen = false;
      const ip = await informer.waitFor(
        name,
        (obj) => {
          if (obj) seen = true;
          // Until the cache has seen the object, "absent" only means "not yet".
          if (!obj && !seen) return undefined;
          const r = kind.readiness(obj);
          if (r.kind === 'failed') throw new Error(`${kind.noun} ${name}: ${r.why}`);
          return r.kind === 'ready' ? r.ip : undefined;
        },
        signal,
      );
      const guestUrl = guestUrlOf(ip);
      await waitForGuestHealthy(guestUrl, secret.token, signal);
      return { ref: name, guestUrl, guestToken: secret.token, vncEndpoint: vncEndpointOf(ip) };
    },

    async destroy(sandboxId: string): Promise<void> {
      await deleteObject(sandboxObjectName(sandboxId));
      await deleteGuestSecret(client, namespace, sandboxId);
    },

    async list(): Promise<string[]> {
      const informer = await ensureSetup();
      await informer.synced(AbortSignal.timeout(options.syncTimeoutMs ?? 30_000));
      void sweepOrphanSecrets(informer).catch((err: unknown) =>
        warn('orphan Secret sweep failed', err),
      );
      const ids: string[] = [];
      for (const obj of informer.list()) {
        const id = sandboxIdOfObjectName(obj.metadata?.name ?? '');
        if (id && kind.isLive(obj)) ids.push(id);
      }
      return ids;
    },

    /**
     * markClaimed flips the `cubicle.dev/state` label to `claimed`. The patch carries the
     * resourceVersion it read (optimistic concurrency), so it never overwrites a change it did
     * not see; a conflict rereads and retries. A gone object is left to reconcile. The first
     * read is the informer's cache (one API call per claim instead of two, on the API server a
     * burst of claims shares with everything else); a stale cache only costs a conflict, and
     * the retries read the object itself.
     */
    async markClaimed(sandboxId: string): Promise<void> {
      const name = sandboxObjectName(sandboxId);
      const informer = await ensureSetup();
      for (let attempt = 0; attempt < 5; attempt++) {
        const cached = attempt === 0 ? informer.get(name) : undefined;
        const obj = cached ?? (await readObject(name));
        if (!obj || obj.metadata?.labels?.[LABELS.state] === 'claimed') return;
        const body = {
          metadata: {
            resourceVersion: obj.metadata?.resourceVersion,
            labels: { [LABELS.state]: 'claimed' },
          },
        };
        try {
          await client.call(`label ${what(name)}`, (o) => api.patch(name, body, mergePatch(o)));
          return;
        } catch (err) {
          if (isNotFound(err)) return;
          if (!isConflict(err)) throw err;
        }
      }
      throw new Error(`${kind.noun} ${sandboxObjectName(sandboxId)}: label kept changing`);
    },

    informer: async () => (await ensureSetup()) as unknown as Informer<KubernetesObject>,

    async close() {
      const pending = setup;
      setup = null;
      if (pending) await (await pending.catch(() => null))?.stop();
    },
  };
}
