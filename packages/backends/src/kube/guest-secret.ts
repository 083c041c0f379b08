import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { guestSecretName, sandboxLabels, type SandboxLabelState } from './names.js';

export interface SandboxIdentity {
  sandboxId: string;
  tenantId: string;
  poolId: string;
}

/** newGuestToken: 64 hex characters (the guest driver wants at least 32). */
export const newGuestToken = () => randomBytes(32).toString('hex');

/**
 * buildGuestSecret is the per-sandbox Secret: the only object that carries the guest token
 * (Pods read it through secretKeyRef, VMs through cloud-init's secretRef; labels and
 * annotations never hold it). `extra` adds keys such as a VM's `userdata`.
 */
export function buildGuestSecret(
  identity: SandboxIdentity,
  namespace: string,
  token: string,
  extra: Record<string, string> = {},
  state: SandboxLabelState = 'warm',
): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: guestSecretName(identity.sandboxId),
      namespace,
      labels: sandboxLabels({ ...identity, state }),
    },
    type: 'Opaque',
    immutable: true,
    stringData: { ...extra, token },
  };
}

/** tokenOfSecret reads the token back (the API returns `data` base64-encoded). */
export function tokenOfSecret(secret: V1Secret): string | null {
  const encoded = secret.data?.token;
  if (!encoded) return secret.stringData?.token ?? null;
  const token = Buffer.from(encoded, 'base64').toString('utf8');
  return token.length >= 32 ? token : null;
}
