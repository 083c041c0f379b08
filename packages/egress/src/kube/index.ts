// The egress point of Kubernetes sandboxes (the chart's own Deployment): the same SandboxGate as
// the local point, reached as the Pods' resolver and HTTP(S) proxy, sandboxes named by Pod IP.
export { PodEgressPoint, type PodEgressPointOptions } from './pod-egress-point.js';
