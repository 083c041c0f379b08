// Tenant data keys (control-plane/src/objects): one random key per tenant, kept sealed by the
// keyring in tenant_data_keys, made once even when replicas race, and the control plane's
// Resources.objects built on them over both object store back ends.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, newId } from '@cubicle/db';
import { createObjectStore, ObjectStoreError, type ObjectStore } from '@cubicle/object-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessS3 } from '../../../test/harness/index.js';
import { newKeyringSpec, openBytes, parseKeyring } from '../src/crypto/keyring.js';
import { createTenantDataKeys, rewrapTenantDataKeys } from '../src/objects/tenant-data-keys.js';
import { createResources } from '../src/resources.js';
import { world, type World } from './setup.js';

let w: World;
beforeAll(async () => {
  w = await world();
});
afterAll(async () => {
  await w?.close();
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof ObjectStoreError ? error.code : `unexpected: ${String(error)}`;
  }
}

async function newTenant(): Promise<string> {
  const id = newId('tenant');
  await w.db.tenant.create({ data: { id, name: `t-${id}` } });
  return id;
}

describe('tenant data keys', () => {
  it('a tenant gets one random 32-byte key, stored only sealed by the keyring and bound to the tenant', async () => {
    const tenantId = await newTenant();
    const keys = createTenantDataKeys(w.deps);
    const key = await keys.dataKey(tenantId);
    expect(key.byteLength).toBe(32);
    expect(await keys.dataKey(tenantId)).toBe(key);
    const rows = await w.db.tenantDataKey.findMany({ where: { tenantId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.keyId).toBe(w.deps.keyring.currentKeyId);
    expect(Buffer.from(rows[0]!.wrappedKey).includes(Buffer.from(key))).toBe(false);
    expect(
      Buffer.from(
        openBytes(w.deps.keyring, rows[0]!.wrappedKey, `tenant-data-key:${tenantId}`),
      ).equals(key),
    ).toBe(true);
    // Copied onto another tenant's row, the wrapped key does not open there.
    const other = await newTenant();
    await w.db.tenantDataKey.create({
      data: { tenantId: other, wrappedKey: rows[0]!.wrappedKey, keyId: rows[0]!.keyId },
    });
    expect(await codeOf(createTenantDataKeys(w.deps).dataKey(other))).toBe('object_integrity');
    await w.db.tenantDataKey.delete({ where: { tenantId: other } });
    // Two tenants never share a key.
    expect(Buffer.from(await keys.dataKey(await newTenant())).equals(key)).toBe(false);
  });

  it('replicas racing to make a tenant key all end with the same one, and one row', async () => {
    const tenantId = await newTenant();
    const second = createDb({ databaseUrl: w.databaseUrl, maxConnections: 10 });
    try {
      const replicas = Array.from({ length: 8 }, (_, i) =>
        createTenantDataKeys({ db: i % 2 === 0 ? w.db : second, keyring: w.deps.keyring }),
      );
      const keys = await Promise.all(replicas.map((r) => r.dataKey(tenantId)));
      for (const key of keys) expect(Buffer.from(key).equals(Buffer.from(keys[0]!))).toBe(true);
      expect(await w.db.tenantDataKey.count({ where: { tenantId } })).toBe(1);
      // A later process (fresh cache) reads the same key; so does a rotated keyring keeping the old key.
      const rotated = parseKeyring(`k2:${randomBytes(32).toString('base64')},${specOf(w)}`);
      const later = await createTenantDataKeys({ db: second, keyring: rotated }).dataKey(tenantId);
      expect(Buffer.from(later).equals(Buffer.from(keys[0]!))).toBe(true);
      // A keyring without the master key that wrapped it cannot open it.
      const foreign = parseKeyring(newKeyringSpec());
      expect(
        await codeOf(createTenantDataKeys({ db: second, keyring: foreign }).dataKey(tenantId)),
      ).toBe('object_integrity');
    } finally {
      await second.$disconnect();
    }
  });

  it('rewrap moves data keys onto the current master key: the same data key, and the old master key can go', async () => {
    const tenantId = await newTenant();
    const oldRing = parseKeyring(`old:${randomBytes(32).toString('base64')}`);
    const key = await createTenantDataKeys({ db: w.db, keyring: oldRing }).dataKey(tenantId);
    const both = parseKeyring(
      [
        `new:${randomBytes(32).toString('base64')}`,
        `old:${oldRing.keys.get('old')!.toString('base64')}`,
        specOf(w), // the earlier cases' keys, rewrapped too
      ].join(','),
    );
    expect(await rewrapTenantDataKeys(w.db, both)).toBeGreaterThanOrEqual(1);
    expect((await w.db.tenantDataKey.findUniqueOrThrow({ where: { tenantId } })).keyId).toBe('new');
    const newOnly = parseKeyring(`new:${both.keys.get('new')!.toString('base64')}`);
    const reopened = await createTenantDataKeys({ db: w.db, keyring: newOnly }).dataKey(tenantId);
    expect(Buffer.from(reopened).equals(Buffer.from(key))).toBe(true);
    expect(await rewrapTenantDataKeys(w.db, newOnly)).toBe(0);
  });

  it('deleting the tenant deletes its key (its objects can no longer be opened)', async () => {
    const tenantId = await newTenant();
    await createTenantDataKeys(w.deps).dataKey(tenantId);
    await w.db.tenant.delete({ where: { id: tenantId } });
    expect(await w.db.tenantDataKey.count({ where: { tenantId } })).toBe(0);
  });
});

/** specOf rebuilds the world's keyring spec (its only key) for a rotation test. */
function specOf(world: World): string {
  const { currentKeyId, keys } = world.deps.keyring;
  return `${currentKeyId}:${keys.get(currentKeyId)!.toString('base64')}`;
}

describe('Resources.objects', () => {
  const fsRoot = mkdtempSync(join(tmpdir(), 'cubicle-resources-objects-'));
  afterAll(() => rmSync(fsRoot, { recursive: true, force: true }));
  const stores: Array<{ name: string; store: () => ObjectStore; dir: () => string }> = [
    { name: 'fs', store: () => createObjectStore({ kind: 'fs', root: fsRoot }), dir: () => fsRoot },
    {
      name: 's3',
      store: () => {
        const s3 = harnessS3();
        return createObjectStore({ kind: 's3', ...s3, forcePathStyle: true });
      },
      dir: () => join(harnessS3().dataDir, harnessS3().bucket),
    },
  ];

  it.each(stores)(
    '$name: one replica writes, another (own cache, own resources) reads; the store holds ciphertext',
    async ({ store, dir }) => {
      const marker = `MARKER-${randomBytes(8).toString('hex')}`;
      const tenantId = await newTenant();
      const writer = createResources({ ...w.deps, objectStore: store() });
      const reader = createResources({ ...w.deps, objectStore: store() });
      await writer.objects.forTenant(tenantId).put('profiles/p1/manifest', Buffer.from(marker));
      expect(
        Buffer.from(
          await reader.objects.forTenant(tenantId).get('profiles/p1/manifest'),
        ).toString(),
      ).toBe(marker);
      expect(
        await codeOf(reader.objects.forTenant(w.otherTenantId).get('profiles/p1/manifest')),
      ).toBe('object_not_found');
      const files = filesUnder(dir());
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((f) => readFileSync(f).includes(marker))).toEqual([]);
      expect(await writer.objects.forTenant(tenantId).deletePrefix('')).toBe(1);
    },
  );

  it('without an object store every call fails with object_store_unavailable', async () => {
    const bare = createResources({ ...w.deps });
    expect(await codeOf(bare.objects.forTenant(w.tenantId).put('k', Buffer.from('x')))).toBe(
      'object_store_unavailable',
    );
    expect(await codeOf(bare.objects.forTenant(w.tenantId).get('k'))).toBe(
      'object_store_unavailable',
    );
  });
});

function filesUnder(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
