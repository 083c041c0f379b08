// The egress package's public face: policy evaluation (./policy) and the egress point (./point).
export * from './policy/index.js';
export * from './point/index.js';
export { makeInjectionCa } from './inject/make-ca.js';
export * from './kube/index.js';
