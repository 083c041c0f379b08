import type { EgressChange } from '@cubicle/contract/api';
import type { SandboxNetworkOptions } from '@cubicle/driver-guest';
import {
  EgressPoint,
  type EgressDenialBatchItem,
  type EgressDenialSink,
  type EgressPointOptions,
  type EgressPolicySource,
  type SandboxEgress,
} from '@cubicle/egress';

export interface LocalEgressOptions {
  /** The installation's scope (localBackendScope): desktop ids are `<scope>-<sandbox id>`. */
  scope: string;
  /** Link range, upstream resolvers (EgressPointOptions); `report` is made here. */
  point?: Omit<EgressPointOptions, 'report'>;
  onError?: (err: unknown, what: string) => void;
}

interface Linked {
  sandboxId: string;
  poolId: string;
  tenantId: string;
  version: string;
}

/**
 * LocalEgress connects the local backend's sandboxes to an egress point on this machine: at
 * provisioning it reads the sandbox's effective policy and makes a link only when the policy is
 * not `none` (a pool that never uses egress costs nothing: the desktop keeps its loopback-only
 * namespace); it applies policy changes to running sandboxes as the control plane announces
 * them; it takes back the links of sandboxes that outlived a worker restart and removes those
 * whose desktop is gone; and it hands the point's denial batches to the control plane.
 * A sandbox provisioned under `none` has no link to open later: a pool leaving `none` applies to
 * the sandboxes provisioned after the change (applyPool bumps the pool's generation so warm ones
 * roll; provision reports `egressLink`, so the API tells a claim whose desktop has none).
 */
export class LocalEgress {
  private point: EgressPoint | null = null;
  private policies: EgressPolicySource | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;
  private readonly linked = new Map<string, Linked>();
  private readonly prefix: string;

  constructor(private readonly options: LocalEgressOptions) {
    this.prefix = `${options.scope}-`;
  }

  /**
   * start makes the egress point and listens for policy changes (call once the database is up).
   * `credentials` (the installation's egress CA) lets the point inject bound credentials.
   */
  async start(
    policies: EgressPolicySource,
    sink: EgressDenialSink,
    credentials?: EgressPointOptions['credentials'],
  ): Promise<void> {
    this.policies = policies;
    this.point = await EgressPoint.start({
      ...this.options.point,
      ...(credentials ? { credentials } : {}),
      report: (batch) => sink.report(batch.map((item) => this.reportOf(item))),
      onError: (err) => this.options.onError?.(err, 'egress point'),
    });
    this.unsubscribe = await policies.subscribe((change) => void this.changed(change));
  }

  private reportOf(item: EgressDenialBatchItem) {
    const { desktopId, ...rest } = item;
    return {
      ...rest,
      sandboxId: this.linked.get(desktopId)?.sandboxId ?? desktopId.slice(this.prefix.length),
    };
  }

  /**
   * networkFor is what provisioning passes to the desktop: its link when the sandbox's policy is
   * not `none`, else null (loopback only). Without a started point every sandbox is `none`.
   */
  async networkFor(sandboxId: string, desktopId: string): Promise<SandboxNetworkOptions | null> {
    if (!this.point || !this.policies) return null;
    const egress = await this.policies.load(sandboxId);
    if (!egress || egress.policy.mode === 'none') return null;
    const network = await this.point.attach(desktopId, egress.policy, {
      injections: egress.injections,
    });
    this.remember(desktopId, egress);
    return {
      netnsPath: network.netnsPath,
      resolvConf: network.resolvConf,
      ...(network.caBundle ? { caBundle: network.caBundle } : {}),
      ...(network.egressCa ? { egressCa: network.egressCa } : {}),
    };
  }

  /** release removes a sandbox's link (destroy, a failed start); idempotent. */
  async release(desktopId: string): Promise<void> {
    this.linked.delete(desktopId);
    await this.point?.detach(desktopId);
  }

  /**
   * reconcile runs beside the backend's list(): links of live desktops nobody serves (a restarted
   * worker) are adopted under their current policy; unserved links of desktops that are gone
   * (a crash) are removed. Only this installation's links are considered, by name.
   */
  async reconcile(liveDesktopIds: ReadonlySet<string>): Promise<void> {
    const point = this.point;
    if (!point || !this.policies) return;
    for (const desktopId of await point.linkedDesktops()) {
      // Another installation's, or served here (a desktop still starting is not listed live
      // yet; one that died is released by the backend's destroy).
      if (!desktopId.startsWith(this.prefix) || point.isAttached(desktopId)) continue;
      if (!liveDesktopIds.has(desktopId)) {
        await this.release(desktopId);
        continue;
      }
      const egress = await this.policies.load(desktopId.slice(this.prefix.length));
      if (!egress) continue; // gone in the database: the sweep destroys it
      await point.attach(desktopId, egress.policy, {
        adopt: true,
        injections: egress.injections,
      });
      this.remember(desktopId, egress);
    }
  }

  private remember(desktopId: string, egress: SandboxEgress): void {
    this.linked.set(desktopId, {
      sandboxId: egress.sandboxId,
      poolId: egress.poolId,
      tenantId: egress.tenantId,
      version: egress.version,
    });
  }

  /** changed reloads the sandboxes a change names and applies their new policy at once. */
  private async changed(change: EgressChange): Promise<void> {
    const targets = [...this.linked].filter(([, linked]) =>
      'pool_id' in change
        ? linked.poolId === change.pool_id
        : 'tenant_id' in change
          ? linked.tenantId === change.tenant_id
          : linked.sandboxId === change.sandbox_id,
    );
    await Promise.all(
      targets.map(async ([desktopId, linked]) => {
        try {
          const egress = await this.policies!.load(linked.sandboxId);
          if (!egress) {
            this.point?.setInjections(desktopId, []);
            this.point?.setPolicy(desktopId, { ...this.point.policyOf(desktopId)!, mode: 'none' });
            return;
          }
          if (egress.version === linked.version) return;
          this.point?.setInjections(desktopId, egress.injections);
          this.point?.setPolicy(desktopId, egress.policy);
          this.remember(desktopId, egress);
        } catch (err) {
          this.options.onError?.(err, `egress policy of ${linked.sandboxId}`);
        }
      }),
    );
  }

  /** close stops serving (links stay for the running sandboxes; the next worker adopts them). */
  async close(): Promise<void> {
    await this.unsubscribe?.();
    await this.point?.close();
    this.point = null;
  }
}
