import type { Backend, PoolKubernetes } from '@cubicle/contract/api';

export interface ProvisionInput {
  sandboxId: string;
  tenantId: string;
  poolId: string;
  image: string;
  cpuMillis: number;
  memoryMb: number;
  env: Record<string, string>;
  /** The pool's placement on Kubernetes (runtime class, node selector, tolerations); others ignore it. */
  kubernetes?: PoolKubernetes | null;
  signal: AbortSignal;
}

/** What a backend reports once a sandbox's guest driver answers. */
export interface ProvisionedSandbox {
  /** The backend's handle (local session id, Pod or VMI name); not secret. */
  ref: string;
  /** `http://host:port`, or `http+unix://…` for a local sandbox (see endpoints.ts). */
  guestUrl: string;
  /** The guest driver's bearer token; stored only encrypted. */
  guestToken: string;
  /** `host:port`, or `unix:/path` for a local sandbox (see endpoints.ts). */
  vncEndpoint: string | null;
  /**
   * Whether the sandbox got a link to the egress point (local: only when its policy was not
   * `none`; a desktop without one cannot gain it). Omitted by backends where every sandbox
   * reaches the egress point, so policy changes always apply.
   */
  egressLink?: boolean;
}

/** What the kernel counted of a sandbox's resources since it started (its cgroup). */
export interface SandboxResources {
  /** Processes the sandbox's memory limit killed inside it. */
  oomKills: number;
  /** The memory limit applied, in bytes; null when none was read. */
  memoryLimitBytes: number | null;
}

/**
 * SandboxBackend is what local desktops, Kubernetes Pods and KubeVirt VMs have in common. The
 * database stays the source of truth; `list` exists so reconcile can find what the database
 * does not know (orphans) and what it knows but the backend lost.
 */
export interface SandboxBackend {
  readonly kind: Backend;
  provision(input: ProvisionInput): Promise<ProvisionedSandbox>;
  /**
   * Idempotent: destroying what is already gone succeeds. Keyed by sandbox id (backends derive
   * their object names from it) so a sandbox whose provisioning crashed before its handle was
   * recorded can still be destroyed.
   */
  destroy(sandboxId: string): Promise<void>;
  /** The sandbox ids the backend currently runs. */
  list(): Promise<string[]>;
  /**
   * Optional: mirror a claim onto the backend's objects (Kubernetes flips the sandbox's
   * `cubicle.dev/state` label). Advisory only — the database decides who holds a sandbox.
   */
  markClaimed?(sandboxId: string): Promise<void>;
  /**
   * Optional: what the kernel counted of a sandbox (local: its cgroup, cheap to read). Answers
   * while it runs and, in the process that destroyed it, for a while after; null when unknown.
   * The worker reads it in the sweep and before destroy, and reports a rise of `oomKills`.
   */
  resourceEvents?(sandboxId: string): Promise<SandboxResources | null>;
  /**
   * Optional: freeze every process of a sandbox (local: its cgroup's freezer; KubeVirt: the VMI's
   * `pause` subresource) and return once it is frozen; idempotent. A backend without it (Pods)
   * cannot pause: the control plane answers `not_supported_by_backend`. A backend that has it
   * but not for this sandbox throws AppError `not_supported_by_backend` itself.
   */
  pause?(sandboxId: string): Promise<void>;
  /** Optional, with pause: thaw a paused sandbox; idempotent (a running one stays running). */
  resume?(sandboxId: string): Promise<void>;
  /** Optional: stop background work (watches) at shutdown. */
  close?(): Promise<void>;
}

export type Backends = Partial<Record<Backend, SandboxBackend>>;
