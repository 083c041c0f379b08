import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsStore, tenantObjects, type TenantObjects } from '@cubicle/object-store';
import { prefetchProfile } from './prefetch-profile.js';
import { blobKey, writeManifest } from './profile-objects.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A tenant's sealed view of a real fs store, counting the reads that reach it. */
async function storeWithReads(): Promise<{ objects: TenantObjects; reads: string[] }> {
  const root = await mkdtemp(join(tmpdir(), 'prefetch-store-'));
  dirs.push(root);
  const key = randomBytes(32);
  const objects = tenantObjects(createFsStore({ kind: 'fs', root }), 'tnt_prefetch', {
    dataKeys: { dataKey: () => Promise.resolve(key) },
  });
  const reads: string[] = [];
  return { objects: { ...objects, get: (k) => (reads.push(k), objects.get(k)) }, reads };
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('prefetchProfile', () => {
  it("reads a version's chunks before the restore asks, hands each out once and reads later asks again", async () => {
    const { objects, reads } = await storeWithReads();
    const files = [randomBytes(1000), randomBytes(2000)];
    for (const f of files) await objects.put(blobKey('prf_1', sha256(f)), f);
    await writeManifest(objects, 'prf_1', {
      format: 1,
      profile: 'p',
      version: 3,
      paths: ['Documents'],
      entries: files.map((f, i) => ({
        type: 'file' as const,
        path: `Documents/f${i}`,
        size: f.length,
        mtime_ms: 1,
        mode: 0o600,
        hash: sha256(f),
        chunks: [sha256(f)],
      })),
      size_bytes: 3000,
      file_count: 2,
      claim_id: 'clm_1',
      saved_at: new Date(0).toISOString(),
    });
    reads.length = 0;

    const early = prefetchProfile(objects, 'prf_1', 3);
    expect((await early.manifest).version).toBe(3);
    // Both chunks are asked of the store without anyone asking the prefetch for them.
    for (let i = 0; i < 100 && reads.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(reads.filter((k) => k.includes('/blobs/'))).toHaveLength(2);
    const [a, b] = files.map((f) => sha256(f));
    expect(Buffer.from(await early.source(a!))).toEqual(files[0]);
    expect(Buffer.from(await early.source(b!))).toEqual(files[1]);
    expect(reads.filter((k) => k.includes('/blobs/'))).toHaveLength(2);
    // Handed out once: a second ask is a read of its own (nothing is kept after the restore).
    expect(Buffer.from(await early.source(a!))).toEqual(files[0]);
    expect(reads.filter((k) => k.includes('/blobs/'))).toHaveLength(3);
    early.drop();
  });
});
