import type { TenantObjects } from '@cubicle/object-store';
import { chunkSizes } from './chunk-transfer.js';
import type { ChunkSource } from './host-stage.js';
import { blobKey, readManifest, type ProfileManifest } from './profile-objects.js';
import { distinctChunks } from './restore-chunks.js';

/**
 * Bytes a prefetch reads ahead of the restore: the store's reads and opening overlap with taking
 * the claim, and a large profile's rest is read as the restore asks for it.
 */
const PREFETCH_MAX_BYTES = 64 * 1024 * 1024;
/** Object reads in flight while prefetching. */
const PREFETCH_CONCURRENCY = 4;

/** A version's manifest and chunks, being read before the claim that restores it is taken. */
export interface ProfilePrefetch {
  version: number;
  manifest: Promise<ProfileManifest>;
  /** Each chunk read early is handed out once (then forgotten); any other is read on demand. */
  source: ChunkSource;
  /** drop stops reading ahead and forgets what was read (the claim failed, or is restored). */
  drop(): void;
}

/**
 * prefetchProfile starts reading version `version` of a profile: its manifest, then its chunks in
 * manifest order, a few at a time, up to PREFETCH_MAX_BYTES, except those `cachedOf` answers
 * (the machine's chunk cache holds them). What it reads is what a read at
 * restore time would answer (the same opened objects, hash-checked where they are staged); an
 * early read that failed before the restore asked for it is forgotten and read again then.
 */
export function prefetchProfile(
  objects: TenantObjects,
  profileId: string,
  version: number,
  cachedOf: (hashes: readonly string[]) => Promise<ReadonlySet<string>> = () =>
    Promise.resolve(new Set()),
): ProfilePrefetch {
  const read = (hash: string) => objects.get(blobKey(profileId, hash));
  const early = new Map<string, Promise<Uint8Array>>();
  let isDropped = false;
  const manifest = readManifest(objects, profileId, version);
  manifest.catch(() => undefined); // awaited (and so reported) by the restore, if it comes
  void manifest.then(
    async (m) => {
      const sizes = chunkSizes(m.entries);
      let budget = PREFETCH_MAX_BYTES;
      const all = distinctChunks(m.entries);
      // A chunk the machine's cache holds is linked from there, never read.
      const cached = await cachedOf(all).catch(() => new Set<string>());
      const queue = all
        .filter((h) => !cached.has(h))
        .filter((h) => (budget -= sizes.get(h) ?? 0) >= 0);
      const lane = async () => {
        for (let hash = queue.shift(); hash !== undefined && !isDropped; hash = queue.shift()) {
          if (early.has(hash)) continue;
          const bytes = read(hash);
          early.set(hash, bytes);
          await bytes.catch(() => early.delete(hash));
        }
      };
      await Promise.all(Array.from({ length: PREFETCH_CONCURRENCY }, lane));
    },
    () => undefined,
  );
  return {
    version,
    manifest,
    source(hash) {
      const found = early.get(hash);
      if (!found) return read(hash);
      early.delete(hash);
      return found;
    },
    drop() {
      isDropped = true;
      early.clear();
    },
  };
}
