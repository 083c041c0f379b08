import type { PoolKubernetes } from '@cubicle/contract/api';

// Where sandbox Pods and VMs may run: operator defaults (worker config) merged with what a pool
// asks for. Kept in Kubernetes' own shape so the builders copy it verbatim.

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface Placement {
  /** e.g. `gvisor`; Pods only (a VM is its own isolation boundary). */
  runtimeClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
}

/**
 * mergePlacement lays a pool's placement over the operator's defaults: a pool's runtime class
 * replaces the default, node selector keys override one by one, tolerations add up.
 */
export function mergePlacement(defaults: Placement = {}, pool: Placement = {}): Placement {
  const nodeSelector = { ...defaults.nodeSelector, ...pool.nodeSelector };
  const tolerations = [...(defaults.tolerations ?? []), ...(pool.tolerations ?? [])];
  const runtimeClassName = pool.runtimeClassName ?? defaults.runtimeClassName;
  return {
    ...(runtimeClassName && { runtimeClassName }),
    ...(Object.keys(nodeSelector).length > 0 && { nodeSelector }),
    ...(tolerations.length > 0 && { tolerations }),
  };
}

/**
 * parseLabelSelector reads an equality-only selector (`a=b,c=d`) into matchLabels; it throws on
 * anything else so a typo in configuration stops the worker instead of opening the policy.
 */
export function parseLabelSelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of selector
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const match =
      /^([A-Za-z0-9][-A-Za-z0-9_./]{0,252})\s*==?\s*([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/.exec(
        part,
      );
    if (!match) throw new Error(`not an equality label selector term: ${JSON.stringify(part)}`);
    labels[match[1] as string] = match[2] ?? '';
  }
  if (Object.keys(labels).length === 0) throw new Error('the label selector is empty');
  return labels;
}

/** placementFromPool turns a pool's `kubernetes` section (API, snake_case) into a Placement. */
export function placementFromPool(pool: PoolKubernetes | null | undefined): Placement {
  if (!pool) return {};
  return {
    ...(pool.runtime_class_name && { runtimeClassName: pool.runtime_class_name }),
    ...(pool.node_selector && { nodeSelector: { ...pool.node_selector } }),
    ...(pool.tolerations && {
      tolerations: pool.tolerations.map((t) => ({
        ...(t.key !== undefined && { key: t.key }),
        operator: t.operator,
        ...(t.value !== undefined && { value: t.value }),
        ...(t.effect !== undefined && { effect: t.effect }),
        ...(t.toleration_seconds !== undefined && { tolerationSeconds: t.toleration_seconds }),
      })),
    }),
  };
}
