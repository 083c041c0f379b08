// Object names and labels every Kubernetes-backed sandbox carries. The test node agent
// (test/harness/kube) and the backends both derive names from here, so they cannot disagree.

const SANDBOX_ID = /^sbx_([0-9a-z]{26})$/;
const OBJECT_NAME = /^sbx-([0-9a-z]{26})$/;

/** Label keys; values are ids (tenant, pool, sandbox) or a SandboxLabelState. */
export const LABELS = {
  tenant: 'cubicle.dev/tenant',
  pool: 'cubicle.dev/pool',
  sandbox: 'cubicle.dev/sandbox',
  state: 'cubicle.dev/state',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const MANAGED_BY = 'cubicle';

/** What the `cubicle.dev/state` label says; the database stays the source of truth. */
export type SandboxLabelState = 'warm' | 'claimed';

/** The guest driver's port inside every Pod and VM, and the VNC server's. */
export const GUEST_PORT = 8080;
export const VNC_PORT = 5900;

/**
 * sandboxObjectName is the Pod or VMI name of a sandbox: `sbx_<ulid>` becomes `sbx-<ulid>`
 * (Kubernetes names are DNS labels: no underscores).
 */
export function sandboxObjectName(sandboxId: string): string {
  const match = SANDBOX_ID.exec(sandboxId);
  if (!match) throw new Error(`not a sandbox id: ${JSON.stringify(sandboxId)}`);
  return `sbx-${match[1]}`;
}

/** guestSecretName is the per-sandbox Secret holding the guest token (and a VM's cloud-init). */
export const guestSecretName = (sandboxId: string) => `${sandboxObjectName(sandboxId)}-guest`;

/** sandboxIdOfObjectName reverses sandboxObjectName; null for names that are not ours. */
export function sandboxIdOfObjectName(name: string): string | null {
  const match = OBJECT_NAME.exec(name);
  return match ? `sbx_${match[1]}` : null;
}

/** The labels of a sandbox's objects (Pod or VMI and its Secret). */
export function sandboxLabels(input: {
  sandboxId: string;
  tenantId: string;
  poolId: string;
  state: SandboxLabelState;
}): Record<string, string> {
  return {
    [LABELS.tenant]: input.tenantId,
    [LABELS.pool]: input.poolId,
    [LABELS.sandbox]: input.sandboxId,
    [LABELS.state]: input.state,
    [LABELS.managedBy]: MANAGED_BY,
  };
}

/** The selector that finds every object this installation manages in its namespace. */
export const MANAGED_SELECTOR = `${LABELS.managedBy}=${MANAGED_BY},${LABELS.sandbox}`;
