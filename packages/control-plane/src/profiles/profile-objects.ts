import { z } from 'zod';
import { ArchiveEntry, HomePath } from '@cubicle/contract/guest';
import type { TenantObjects } from '@cubicle/object-store';

// The layout of one profile in its tenant's store (keys relative to the tenant's prefix):
//   profiles/<row id>/blobs/<sha256>          one chunk, content-addressed, shared by versions
//   profiles/<row id>/versions/<n>.json       the manifest of version n, written after its chunks

export const profilePrefix = (profileId: string) => `profiles/${profileId}/`;
export const blobKey = (profileId: string, hash: string) => `profiles/${profileId}/blobs/${hash}`;
export const versionKey = (profileId: string, version: number) =>
  `profiles/${profileId}/versions/${String(version).padStart(8, '0')}.json`;

/** ProfileManifest is one stored version: what its files are and where they came from. */
export const ProfileManifest = z.object({
  format: z.literal(1),
  profile: z.string(),
  version: z.int().min(1),
  paths: z.array(HomePath).min(1),
  entries: z.array(ArchiveEntry),
  size_bytes: z.int().min(0),
  file_count: z.int().min(0),
  claim_id: z.string(),
  saved_at: z.string(),
});
export type ProfileManifest = z.infer<typeof ProfileManifest>;

/** readManifest reads and checks a version's manifest (a stored object is a boundary too). */
export async function readManifest(
  objects: TenantObjects,
  profileId: string,
  version: number,
): Promise<ProfileManifest> {
  const body = await objects.get(versionKey(profileId, version));
  return ProfileManifest.parse(JSON.parse(Buffer.from(body).toString('utf8')));
}

export const writeManifest = (objects: TenantObjects, profileId: string, m: ProfileManifest) =>
  objects.put(versionKey(profileId, m.version), Buffer.from(JSON.stringify(m)));

/** mapLimit maps with at most `limit` calls in flight, answers in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return out;
}
