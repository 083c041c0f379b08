import type { ProfileSaveResult } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Profile as ProfileRow } from '@cubicle/db';
import type { TenantObjects } from '@cubicle/object-store';
import { nowOf } from '../context.js';
import type { GuestClient, SandboxGuestClient } from '../guest/guest-client.js';
import { recordWebhookEvent } from '../webhooks/emit-webhook-event.js';
import { uploadChunks, TRANSFER_CALL_MS } from './home-transfer.js';
import { chunksOf, diffManifests } from './manifest-diff.js';
import { toProfileView, type ProfileDeps } from './profile-deps.js';
import { blobKey, readManifest, versionKey, writeManifest } from './profile-objects.js';
import { hostChunkCache } from './chunk-cache.js';

export interface SaveInput {
  tenantId: string;
  profile: ProfileRow;
  claimId: string;
  guest: GuestClient | SandboxGuestClient;
  paths: string[];
  /** Stop the desktop's browsers first (at release: their databases are then closed and whole). */
  quiesce: boolean;
  reason: 'release' | 'request';
}

/**
 * saveProfile stores the desktop's profile paths as the profile's next version, incrementally
 * and crash-safely, in this order:
 *
 * 1. `archive.scan` with the current version's manifest (unchanged files are not even read);
 * 2. the tenant's `profile_bytes` quota (nothing stored when over);
 * 3. upload the chunks the current version does not have (content-addressed: a chunk left by an
 *    earlier, interrupted save is simply written again);
 * 4. the new version's manifest object;
 * 5. the row moves to the new version (compare-and-set on the version it started from) with its
 *    `profile.saved` event, in one transaction.
 *
 * A process killed anywhere before 5 leaves the row on the previous version, whose manifest and
 * chunks are untouched (only the version before it is ever collected, step 6), so the profile
 * restores whole. 6. best effort: the manifest two versions back and its chunks no longer used.
 */
export async function saveProfile(deps: ProfileDeps, input: SaveInput): Promise<ProfileSaveResult> {
  const started = performance.now();
  const { profile, tenantId } = input;
  const objects = deps.objects.forTenant(tenantId);
  const current =
    profile.version > 0 ? await readManifest(objects, profile.id, profile.version) : null;
  const scan = await input.guest.call(
    'archive.scan',
    { paths: input.paths, previous: current?.entries ?? [], quiesce: input.quiesce },
    { timeoutMs: TRANSFER_CALL_MS },
  );
  await checkQuota(deps, tenantId, profile.id, scan.total_bytes);
  const diff = diffManifests(current?.entries ?? [], scan.entries);
  const uploaded = await uploadChunks(input.guest, objects, profile.id, diff.upload);

  const version = profile.version + 1;
  const now = nowOf(deps);
  const fileCount = scan.entries.filter((e) => e.type === 'file').length;
  await writeManifest(objects, profile.id, {
    format: 1,
    profile: profile.name,
    version,
    paths: input.paths,
    entries: scan.entries,
    size_bytes: scan.total_bytes,
    file_count: fileCount,
    claim_id: input.claimId,
    saved_at: now.toISOString(),
  });
  const row = await deps.db.$transaction(async (tx) => {
    const moved = await tx.profile.updateMany({
      where: { id: profile.id, version: profile.version },
      data: {
        version,
        sizeBytes: BigInt(scan.total_bytes),
        fileCount,
        savedAt: now,
        lastUsedAt: now,
      },
    });
    if (moved.count === 0) return null;
    await recordWebhookEvent(
      tx,
      tenantId,
      'profile.saved',
      {
        profile: profile.name,
        version,
        size_bytes: scan.total_bytes,
        claim_id: input.claimId,
        reason: input.reason,
      },
      now,
    );
    return tx.profile.findUniqueOrThrow({ where: { id: profile.id } });
  });
  if (!row)
    throw new AppError('conflict', 'the profile was saved by another call meanwhile; save again');
  if (current) await collectVersion(objects, profile.id, version - 2, current, scan.entries);
  return {
    profile: toProfileView(row),
    changed_files: new Set(diff.upload.map((u) => u.path)).size,
    uploaded_bytes: uploaded,
    duration_ms: Math.round(performance.now() - started),
  };
}

/** checkQuota refuses a version that would take the tenant's profiles past `max_profile_bytes`. */
async function checkQuota(deps: ProfileDeps, tenantId: string, profileId: string, size: number) {
  const [tenant, others] = await Promise.all([
    deps.db.tenant.findUniqueOrThrow({
      where: { id: tenantId },
      select: { maxProfileBytes: true },
    }),
    deps.db.profile.aggregate({
      where: { tenantId, id: { not: profileId } },
      _sum: { sizeBytes: true },
    }),
  ]);
  const used = Number(others._sum.sizeBytes ?? 0n);
  const limit = Number(tenant.maxProfileBytes);
  if (used + size > limit)
    throw new AppError(
      'quota_exceeded',
      `saving ${size} bytes would take the tenant's profiles to ${used + size} bytes; the profile_bytes quota is ${limit}. The previous version is kept.`,
      { quota: 'profile_bytes', limit, used },
    );
}

/**
 * collectVersion deletes the manifest of `version` (two back from the new one) and its chunks
 * that neither the previous nor the new version uses. Best effort: what it leaves is only space.
 */
async function collectVersion(
  objects: TenantObjects,
  profileId: string,
  version: number,
  previous: { entries: Parameters<typeof chunksOf>[0] },
  next: Parameters<typeof chunksOf>[0],
) {
  if (version < 1) return;
  try {
    const old = await readManifest(objects, profileId, version);
    const keep = new Set([...chunksOf(previous.entries), ...chunksOf(next)]);
    const drop = [...chunksOf(old.entries)]
      .filter((h) => !keep.has(h))
      .map((h) => blobKey(profileId, h));
    await hostChunkCache().drop(objects.tenantId, drop);
    await objects.delete(drop);
    await objects.delete([versionKey(profileId, version)]);
  } catch {
    // Already collected, or the store is busy: the next save tries the one after.
  }
}
