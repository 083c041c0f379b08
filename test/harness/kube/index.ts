// The real Kubernetes test cluster: etcd + kube-apiserver started per suite, and the node agent
// that runs Pods and VirtualMachineInstances as local desktops. See README.md in this folder.
export {
  startKubeCluster,
  type KubeCluster,
  type StartKubeClusterOptions,
} from './start-cluster.js';
export {
  NODE_NAME,
  startNodeAgent,
  type NodeAgent,
  type NodeAgentOptions,
  type RunningWorkload,
  type WorkloadKind,
} from './node-agent.js';
export { KUBEVIRT_CRDS, installKubevirtCrds } from './kubevirt-crds.js';
export { VMI_API } from './write-status.js';
export { GUEST_PORT, VNC_PORT, type VmiObject, type WorkloadSpec } from './workload-spec.js';
export { apiRequestCount, type RequestKind } from './request-metrics.js';
