export {
  createLocalBackend,
  desktopIdOf,
  localBackendScope,
  type LocalBackend,
  type LocalBackendOptions,
} from './local/local-backend.js';
export { LocalEgress, type LocalEgressOptions } from './local/local-egress.js';
export {
  createKubeClient,
  KubeApiError,
  type ApiOptions,
  type CallOptions,
  type KubeClient,
} from './kube/client.js';
export { loadKubeConfig, type KubeConfigSource } from './kube/kube-config.js';
export {
  guestSecretName,
  GUEST_PORT,
  LABELS,
  MANAGED_SELECTOR,
  sandboxIdOfObjectName,
  sandboxObjectName,
  VNC_PORT,
} from './kube/names.js';
export { parseLabelSelector, type Placement, type Toleration } from './kube/placement.js';
export {
  egressPointPorts,
  networkPolicyOptionsOf,
  parseCidrList,
  type NetworkPolicySettings,
} from './kube/network-policy-settings.js';
export {
  buildSandboxNetworkPolicy,
  NETWORK_POLICY_NAME,
  DENIED_EGRESS_V4,
  DENIED_EGRESS_V6,
  type NetworkPolicy,
} from './kube/network-policy.js';
export { parsePodSelector, selectorMatches, type PodLabelSelector } from './kube/pod-selector.js';
export type { KubeBackendOptions, KubeSandboxBackend } from './kube/kube-sandbox-backend.js';
export { startInformer, type Informer } from './kube/informer.js';
export { buildGuestSecret, newGuestToken } from './kube/guest-secret.js';
export { createKubernetesBackend, podsPath } from './kubernetes/kubernetes-backend.js';
export { buildSandboxPod } from './kubernetes/pod-spec.js';
export {
  PROXY_ENV_NAMES,
  egressPointLookup,
  readEgressPointAddress,
  withEgressPoint,
  type EgressPointAddress,
  type EgressPointService,
} from './kubernetes/egress-pod.js';
export { startPodAddressBook, type PodAddressBook } from './kubernetes/egress-pod-addresses.js';
export { createKubevirtBackend, vmisPath } from './kubevirt/kubevirt-backend.js';
export { buildSandboxVmi } from './kubevirt/vmi-spec.js';
export {
  hollowAnswers,
  startHollowGuests,
  type HollowGuests,
  type HollowGuestsOptions,
} from './hollow/hollow-guests.js';
export { createHollowBackend, type HollowBackendOptions } from './hollow/hollow-backend.js';
