import { writeAuditEvent } from '@cubicle/tenancy';
import type { SandboxBackend, SandboxResources } from '../backend/types.js';
import type { Deps } from '../resources.js';
import { raiseOomKillsRow } from '../repositories/sandboxes.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';

const MiB = 1024 * 1024;

/**
 * readResources asks a backend what the kernel counted of a sandbox; null when the backend does
 * not count (Kubernetes, hollow) or the read fails — a report is never worth a failed sweep or
 * destroy.
 */
export async function readResources(
  backend: SandboxBackend,
  sandboxId: string,
): Promise<SandboxResources | null> {
  if (!backend.resourceEvents) return null;
  return backend.resourceEvents(sandboxId).catch(() => null);
}

/**
 * reportOomKills records that a sandbox's memory limit killed processes inside it: when
 * `resources.oomKills` is above the sandbox's recorded `oom_kills`, it raises the column and, in
 * the same transaction, writes a `sandbox.oom_killed` audit event (on the sandbox's claim, for
 * the operator) and the `sandbox.oom_killed` webhook outbox row. The guarded UPDATE makes each
 * rise reported once, however many workers read the same count. `sandboxFailed` says the sandbox
 * died with it. Returns whether this call recorded a rise.
 */
export async function reportOomKills(
  deps: Deps,
  sandboxId: string,
  resources: SandboxResources | null,
  sandboxFailed = false,
): Promise<boolean> {
  const kills = resources?.oomKills ?? 0;
  if (kills <= 0) return false;
  const limit = resources!.memoryLimitBytes;
  // cgroup v1 reports "no limit" as ~2^63: not a limit anyone set.
  const limitMb = limit !== null && limit < 2 ** 50 ? Math.round(limit / MiB) : null;
  return deps.db.$transaction(async (tx) => {
    // The one claim a sandbox ever has (claims.sandbox_id is unique), live or ended.
    const row = await raiseOomKillsRow(tx, sandboxId, kills);
    if (!row) return false;
    await writeAuditEvent(tx, {
      tenantId: row.tenant_id,
      actor: { type: 'system', component: 'worker' },
      action: 'sandbox.oom_killed',
      targetType: row.claim_id ? 'claim' : 'sandbox',
      targetId: row.claim_id ?? sandboxId,
      result: 'success',
      details: {
        sandbox_id: sandboxId,
        oom_kills: kills,
        memory_limit_mb: limitMb,
        sandbox_failed: sandboxFailed,
      },
    });
    await recordWebhookEvent(tx, row.tenant_id, 'sandbox.oom_killed', {
      sandbox_id: sandboxId,
      pool: row.pool,
      pool_id: row.pool_id,
      claim_id: row.claim_id,
      oom_kills: kills,
      memory_limit_mb: limitMb,
      sandbox_failed: sandboxFailed,
    });
    return true;
  });
}

/**
 * reportClaimedOomKills is the sweep's look at running claimed sandboxes: one read of each
 * one's counters (local: a few cgroup files), and a write only for those whose count rose
 * since `known` (the recorded `oom_kills`). Returns how many rises it recorded.
 */
export async function reportClaimedOomKills(
  deps: Deps,
  backend: SandboxBackend,
  sandboxes: { id: string; oomKills: number }[],
): Promise<number> {
  if (!backend.resourceEvents) return 0;
  let reported = 0;
  for (const s of sandboxes) {
    const resources = await readResources(backend, s.id);
    if (
      resources &&
      resources.oomKills > s.oomKills &&
      (await reportOomKills(deps, s.id, resources))
    )
      reported++;
  }
  return reported;
}
