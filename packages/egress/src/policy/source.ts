import type { EffectiveEgressPolicy, EgressChange, EgressProtocol } from '@cubicle/contract/api';
import type { CredentialInjection } from '../point/inject-credentials.js';

/**
 * SandboxEgress is one sandbox's effective policy as the control plane computed it: its pool's
 * policy (or the installation default) narrowed by its live claim's, with the operator ranges.
 * `version` changes exactly when `policy` does, so a point can skip reapplying an equal policy.
 */
export interface SandboxEgress {
  sandboxId: string;
  /** The backend's handle of the sandbox (the local desktop id, the Pod or VMI name). */
  backendRef: string | null;
  tenantId: string;
  poolId: string;
  /** The live claim holding the sandbox; null while warm (the pool's policy applies). */
  claimId: string | null;
  /** Changes when `policy` or the credentials bound for it change (never derived from a value). */
  version: string;
  policy: EffectiveEgressPolicy;
  /**
   * Credentials the point injects for this sandbox (the tenant's stored secrets bound to hosts,
   * values formatted): only while a claim holds it and its policy is not `none`; else empty.
   */
  injections: CredentialInjection[];
}

/**
 * EgressPolicySource is how an egress point learns policies (the control plane implements it:
 * `egressPolicySource` in @cubicle/control-plane). `load` reads the current policy, null for a
 * sandbox that is gone (enforce `none`). `subscribe` calls back within milliseconds of a change
 * (Redis pub/sub): the point then loads again every sandbox the change names — one sandbox, all
 * of a pool's, or all of a tenant's (its credential bindings changed). Reload everything after a reconnect; a missed message is otherwise missed.
 */
export interface EgressPolicySource {
  load(sandboxId: string): Promise<SandboxEgress | null>;
  subscribe(listener: (change: EgressChange) => void): Promise<() => Promise<void>>;
}

/**
 * One destination's denials, collapsed by the point over its batch window. A point may report
 * allowed connections the same way (`verdict: 'allowed'`, collapsed too) for the dashboard's
 * Network tab; they count but raise no event, webhook or audit.
 */
export interface EgressDenialReport {
  sandboxId: string;
  /** Default `denied`. */
  verdict?: 'allowed' | 'denied';
  protocol: EgressProtocol;
  name: string | null;
  ip: string | null;
  port: number | null;
  /** Decision.rule, as decided. */
  rule: string;
  process: string | null;
  count: number;
  firstAt: Date;
  lastAt: Date;
}

/**
 * EgressDenialSink takes the point's batches (`ingestEgressDenials` in the control plane): it
 * collapses them per claim, destination and minute, and fans them out to the event list, the
 * claim's live stream, webhooks, audit and usage. Denials of a sandbox with no live claim are
 * counted and dropped.
 */
export interface EgressDenialSink {
  report(batch: readonly EgressDenialReport[]): Promise<void>;
}
