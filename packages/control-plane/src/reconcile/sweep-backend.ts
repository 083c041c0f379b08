import { nowOf, nudgeReconcile } from '../context.js';
import type { SandboxBackend } from '../backend/types.js';
import type { WorkerDeps } from '../resources.js';
import { releaseClaim } from '../claims/manage-claims.js';
import { emitWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { sandboxFailedData } from '../webhooks/event-data.js';
import {
  readResources,
  reportClaimedOomKills,
  reportOomKills,
} from '../sandboxes/report-oom-kills.js';
import { ControlPlaneFailure } from './failure-reasons.js';
import { moveSandboxes } from '../lifecycle/sandbox-transitions.js';
import { knownSandboxRows } from '../repositories/sandboxes.js';

export interface SweepResult {
  orphansDestroyed: number;
  lostMarkedFailed: number;
  /** Sandboxes whose memory limit killed processes since the last look (sandbox.oom_killed). */
  oomKillsReported: number;
}

/**
 * sweepBackend compares what a backend runs with the database. Sandboxes the database does not
 * know, or knows as ended, are orphans and are destroyed. Warm or claimed sandboxes the backend
 * no longer runs are lost: marked failed (their claims released with `sandbox_failed`) so
 * reconcile replaces them (failure reason `oom_killed` when their memory limit had killed
 * processes in them). Provisioning ones are left to the provisioning timeout. Running claimed
 * sandboxes are looked at for new OOM kills (reportClaimedOomKills).
 */
export async function sweepBackend(
  deps: WorkerDeps,
  backend: SandboxBackend,
): Promise<SweepResult> {
  // Only sandboxes that were ready before the listing started can be missing from it; one that
  // turned warm while we listed is simply newer than the snapshot.
  const listedAt = nowOf(deps);
  const running = new Set(await backend.list());
  const rows = await knownSandboxRows(deps.db, [...running], backend.kind, listedAt);
  const known = rows.map((r) => ({
    id: r.id,
    state: r.state,
    tenantId: r.tenant_id,
    poolId: r.pool_id,
    readyAt: r.ready_at,
    oomKills: r.oom_kills,
  }));
  const byId = new Map(known.map((s) => [s.id, s]));
  let orphansDestroyed = 0;
  for (const id of running) {
    const row = byId.get(id);
    if (!row || row.state === 'deleted') {
      await backend.destroy(id);
      orphansDestroyed++;
    }
  }
  let lostMarkedFailed = 0;
  for (const row of known) {
    if ((row.state !== 'warm' && row.state !== 'claimed') || running.has(row.id)) continue;
    if (!row.readyAt || row.readyAt >= listedAt) continue;
    // Read before anything destroys it (destroy removes a local sandbox's cgroup): a sandbox
    // that dies after its memory limit killed processes in it most likely died of that.
    const resources = await readResources(backend, row.id);
    const isOomKilled = (resources?.oomKills ?? 0) > 0;
    const count = await moveSandboxes(deps.db, {
      ids: row.id,
      from: [row.state],
      to: 'failed',
      reason: 'lost_by_backend',
      set: {
        failureReason: isOomKilled
          ? ControlPlaneFailure.oomKilled
          : ControlPlaneFailure.lostByBackend,
        endedAt: nowOf(deps),
      },
      guard: { readyAt: { lt: listedAt } },
    });
    if (count === 0) continue;
    lostMarkedFailed++;
    if (isOomKilled) await reportOomKills(deps, row.id, resources, true);
    await emitWebhookEvent(
      deps,
      row.tenantId,
      'sandbox.failed',
      sandboxFailedData(deps.db, row.id, 'lost'),
    );
    const claims = await deps.db.claim.findMany({
      // The claim still holding it, expired or not: it ends for the sandbox's loss.
      where: { sandboxId: row.id, status: { not: 'released' } },
      select: { id: true },
    });
    for (const c of claims) await releaseClaim(deps, row.tenantId, c.id, 'sandbox_failed');
    void nudgeReconcile(deps, row.tenantId, row.poolId);
  }
  const oomKillsReported = await reportClaimedOomKills(
    deps,
    backend,
    known.filter((s) => s.state === 'claimed' && running.has(s.id)),
  );
  return { orphansDestroyed, lostMarkedFailed, oomKillsReported };
}
