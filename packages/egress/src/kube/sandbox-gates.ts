import type { EffectiveEgressPolicy, EgressChange } from '@cubicle/contract/api';
import type { SandboxGate } from '../point/sandbox-gate.js';
import type { EgressPolicySource, SandboxEgress } from '../policy/source.js';

interface Entry {
  gate: SandboxGate;
  /** The loaded policy's identity (null: the sandbox was gone, `none` enforced). */
  loaded: Pick<SandboxEgress, 'poolId' | 'tenantId' | 'version'> | null;
  usedAt: number;
}

/** A sandbox not asked about for this long has its gate dropped (it is loaded again on use). */
const IDLE_MS = 10 * 60_000;

/**
 * SandboxGates keeps one SandboxGate per sandbox an egress point serves, loaded from the policy
 * source on first use and kept current as the control plane announces changes (a pool's, a
 * tenant's credentials, one sandbox's claim): the affected gates reload and take the new policy
 * and bound credentials at once, cutting open connections they refuse. A sandbox the source no longer knows is held to
 * `none`. Gates nobody used for ten minutes are dropped.
 */
export class SandboxGates {
  private readonly entries = new Map<string, Promise<Entry>>();
  private readonly pruner: NodeJS.Timeout;

  constructor(
    private readonly policies: EgressPolicySource,
    private readonly make: (sandboxId: string, policy: EffectiveEgressPolicy) => SandboxGate,
    /** The policy a gate enforces for what was loaded (null: gone), with the point's floor. */
    private readonly enforce: (policy: EffectiveEgressPolicy | null) => EffectiveEgressPolicy,
    private readonly onError: (err: unknown, sandboxId: string) => void,
  ) {
    this.pruner = setInterval(() => this.prune(), 60_000);
    this.pruner.unref();
  }

  /** gateFor is the sandbox's gate, loading its policy the first time. */
  async gateFor(sandboxId: string): Promise<SandboxGate> {
    let entry = this.entries.get(sandboxId);
    if (!entry) {
      entry = this.load(sandboxId);
      this.entries.set(sandboxId, entry);
      entry.catch(() => this.entries.delete(sandboxId));
    }
    const found = await entry;
    found.usedAt = Date.now();
    return found.gate;
  }

  private async load(sandboxId: string): Promise<Entry> {
    const egress = await this.policies.load(sandboxId);
    const gate = this.make(sandboxId, this.enforce(egress?.policy ?? null));
    gate.setInjections(egress?.injections ?? []);
    return { gate, loaded: egress ? identity(egress) : null, usedAt: Date.now() };
  }

  /** changed reloads the gates a change names and applies their new policies at once. */
  async changed(change: EgressChange): Promise<void> {
    const entries = await Promise.all(
      [...this.entries].map(async ([id, p]) => [id, await p.catch(() => null)] as const),
    );
    await Promise.all(
      entries.map(async ([sandboxId, entry]) => {
        if (!entry || !affects(change, sandboxId, entry)) return;
        try {
          const egress = await this.policies.load(sandboxId);
          if (egress && egress.version === entry.loaded?.version) return;
          // Credentials first, as the local point does: a connection carrying a value no longer
          // bound is cut before the new policy lets anything else through.
          entry.gate.setInjections(egress?.injections ?? []);
          entry.gate.setPolicy(this.enforce(egress?.policy ?? null));
          entry.loaded = egress ? identity(egress) : null;
        } catch (err) {
          this.onError(err, sandboxId);
        }
      }),
    );
  }

  private prune(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, p] of this.entries)
      void p.then(
        (entry) => {
          if (entry.usedAt < cutoff && entry.gate.connectionCount === 0) this.entries.delete(id);
        },
        () => undefined,
      );
  }

  close(): void {
    clearInterval(this.pruner);
    this.entries.clear();
  }
}

const identity = (egress: SandboxEgress) => ({
  poolId: egress.poolId,
  tenantId: egress.tenantId,
  version: egress.version,
});

/** affects: a change names this sandbox, its pool or its tenant (a gone one reloads on any). */
function affects(change: EgressChange, sandboxId: string, entry: Entry): boolean {
  if ('sandbox_id' in change) return change.sandbox_id === sandboxId;
  if (!entry.loaded) return true;
  if ('pool_id' in change) return change.pool_id === entry.loaded.poolId;
  return change.tenant_id === entry.loaded.tenantId;
}
