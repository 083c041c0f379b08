import type { Pool as PoolView, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, Prisma, type Pool } from '@cubicle/db';
import { nudgeReconcile } from '../context.js';
import type { Deps, Resources } from '../resources.js';
import { countSandboxes } from './count-sandboxes.js';
import { toPoolView } from './pool-view.js';
import { publishEgressChange } from '../egress/egress-changes.js';
import { installationOf } from '../egress/egress-installation.js';
import { storedPoolEgress } from '../egress/sandbox-egress.js';
import { lockForTransaction } from '../repositories/transaction-locks.js';
import { checkQuota } from '@cubicle/tenancy';

/**
 * canonicalJson stringifies with object keys sorted: Postgres JSONB returns keys in its own
 * order (shorter first), so a plain JSON.stringify would see a change on every identical PUT.
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Fields whose change means warm sandboxes no longer match the template and must be rolled. */
function templateOf(
  row: Pick<Pool, 'image' | 'backend' | 'cpuMillis' | 'memoryMb' | 'env' | 'kubernetes' | 'prime'>,
) {
  return canonicalJson([
    row.image,
    row.backend,
    row.cpuMillis,
    row.memoryMb,
    row.env,
    row.kubernetes,
    // A warm desktop is primed once, when it starts: other apps mean other desktops.
    row.prime,
  ]);
}

/**
 * needsLink says whether a pool's desktops are provisioned with a link to the egress point
 * (the local backend links only a sandbox whose mode is not `none`, and a desktop cannot gain
 * a link later): a change of it rolls warm desktops, so a pool leaving `none` serves its next
 * claims from desktops that can reach out (and one entering `none` drops the unused links).
 */
function needsLink(installation: ReturnType<typeof installationOf>, egress: unknown): boolean {
  return (storedPoolEgress(egress)?.mode ?? installation.default) !== 'none';
}

function columnsOf(spec: PoolSpec) {
  return {
    image: spec.image,
    backend: spec.backend,
    cpuMillis: Math.round(spec.cpu * 1000),
    memoryMb: spec.memory_mb,
    minSize: spec.autoscaling.min,
    initialSize: spec.autoscaling.initial,
    maxSize: spec.autoscaling.max,
    claimTtlSeconds: spec.claim_ttl_seconds,
    maxClaimLifetimeSeconds: spec.max_claim_lifetime_seconds,
    idleTimeoutSeconds: spec.idle_timeout_seconds,
    // Not part of the template: the auto-pause sweep reads it each time.
    idlePauseSeconds: spec.idle_pause_seconds,
    env: spec.env,
    // Stored as {} when absent (see toPoolView); not part of the template: a change reaches
    // running sandboxes through the egress point, except one between `none` and a mode with
    // network (needsLink), which rolls warm ones.
    egress: spec.egress ?? {},
    // Stored as {} when absent (see toPoolView).
    kubernetes: spec.kubernetes ?? {},
    prime: spec.prime,
    // Not part of the template: the worker starts each claim's encoder, warm desktops stay.
    recording: spec.recording,
    // Stored as [] when absent (the default set); not part of the template: read at each claim.
    profilePaths: spec.profile_paths ?? [],
  };
}

/** The columns as Prisma writes them: a JSON column's SQL NULL is Prisma.DbNull, not null. */
function dataOf(columns: ReturnType<typeof columnsOf>) {
  return {
    ...columns,
    prime: columns.prime ?? Prisma.DbNull,
    recording: columns.recording ?? Prisma.DbNull,
  };
}

/**
 * applyPool makes the tenant's pool `name` match `spec` (create or update). Applying the same
 * spec again changes nothing. A template change bumps the generation; reconcile then rolls warm
 * sandboxes of older generations while claimed ones run on untouched. So does an egress change
 * between `none` and a mode with network (needsLink); other egress changes apply in place.
 */
export async function applyPool(
  deps: Deps & Partial<Pick<Resources, 'egress'>>,
  tenantId: string,
  name: string,
  spec: PoolSpec,
): Promise<{ pool: PoolView; created: boolean }> {
  const columns = columnsOf(spec);
  const result = await deps.db.$transaction(async (tx) => {
    // Serialise applies of one pool name so two concurrent PUTs cannot both create it.
    await lockForTransaction(tx, `pool:${tenantId}:${name}`);
    const existing = await tx.pool.findFirst({ where: { tenantId, name, deletedAt: null } });
    if (!existing) {
      await checkQuota(tx, tenantId, 'pools');
      const row = await tx.pool.create({
        data: { id: newId('pool'), tenantId, name, ...dataOf(columns) },
      });
      return { row, created: true, changed: true };
    }
    const installation = installationOf(deps);
    const isTemplateChange =
      templateOf(existing) !==
        templateOf({
          ...columns,
          env: columns.env as Prisma.JsonValue,
          kubernetes: columns.kubernetes as Prisma.JsonValue,
          prime: columns.prime as Prisma.JsonValue,
        }) ||
      needsLink(installation, existing.egress) !== needsLink(installation, columns.egress);
    const isAnyChange =
      isTemplateChange ||
      (Object.keys(columns) as (keyof typeof columns)[]).some(
        (k) => canonicalJson(existing[k]) !== canonicalJson(columns[k]),
      );
    if (!isAnyChange) return { row: existing, created: false, changed: false };
    const row = await tx.pool.update({
      where: { id: existing.id },
      data: { ...dataOf(columns), ...(isTemplateChange ? { generation: { increment: 1 } } : {}) },
    });
    return { row, created: false, changed: true };
  });
  if (result.changed) void nudgeReconcile(deps, tenantId, result.row.id);
  if (result.changed && !result.created) void publishEgressChange(deps, { pool_id: result.row.id });
  const counts = await countSandboxes(deps.db, [result.row.id]);
  return { pool: toPoolView(result.row, counts.get(result.row.id)!), created: result.created };
}

/** findLivePool returns the tenant's pool by name or throws not_found (also for other tenants' pools). */
export async function findLivePool(deps: Deps, tenantId: string, name: string): Promise<Pool> {
  const pool = await deps.db.pool.findFirst({ where: { tenantId, name, deletedAt: null } });
  if (!pool) throw new AppError('not_found', `pool ${name} not found`);
  return pool;
}
