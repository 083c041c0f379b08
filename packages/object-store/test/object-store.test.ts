// One behaviour suite for both back ends: files under a private directory, and the S3 API of a
// real versitygw the harness started (test/harness/s3-server.ts). Tenant data keys come from a
// small in-test TenantDataKeys (random per tenant); the control plane's keyring-backed keys have
// their own suite (packages/control-plane/test/tenant-data-keys.test.ts).
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessS3 } from '../../../test/harness/index.js';
import {
  createObjectStore,
  ObjectStoreError,
  SEAL_OVERHEAD,
  tenantObjects,
  type ObjectStore,
  type ObjectStoreConfig,
  type TenantDataKeys,
} from '../src/index.js';

const MARKER = `PLAINTEXT-MARKER-${randomBytes(6).toString('hex')}`;

function dataKeys(): TenantDataKeys {
  const keys = new Map<string, Uint8Array>();
  return {
    dataKey: async (tenantId) => {
      if (!keys.has(tenantId)) keys.set(tenantId, randomBytes(32));
      return keys.get(tenantId)!;
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof ObjectStoreError ? error.code : `unexpected: ${String(error)}`;
  }
}

async function keysOf(iterable: AsyncIterable<{ key: string }>): Promise<string[]> {
  const keys: string[] = [];
  for await (const info of iterable) keys.push(info.key);
  return keys;
}

/** Every regular file under dir, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

const fsRoot = mkdtempSync(join(tmpdir(), 'cubicle-objects-'));
afterAll(() => rmSync(fsRoot, { recursive: true, force: true }));

interface Backend {
  name: 'fs' | 's3';
  config: () => ObjectStoreConfig;
  /** Where the bytes the store wrote end up on disk. */
  storedDir: () => string;
}

const backends: Backend[] = [
  { name: 'fs', config: () => ({ kind: 'fs', root: fsRoot }), storedDir: () => fsRoot },
  {
    name: 's3',
    config: () => {
      const s3 = harnessS3();
      return {
        kind: 's3',
        endpoint: s3.endpoint,
        region: s3.region,
        bucket: s3.bucket,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
        forcePathStyle: true,
      };
    },
    storedDir: () => join(harnessS3().dataDir, harnessS3().bucket),
  },
];

describe.each(backends)('object store: $name', (backend) => {
  // Each back end's run gets its own tenants, so the two suites never see each other's keys.
  const run = randomBytes(4).toString('hex');
  const tenantA = `ten_a${run}`;
  const tenantB = `ten_b${run}`;
  const keys = dataKeys();
  let store: ObjectStore;
  const a = () => tenantObjects(store, tenantA, { dataKeys: keys });
  const b = () => tenantObjects(store, tenantB, { dataKeys: keys });

  it('put, get, head, list in key order, delete and deletePrefix', async () => {
    store = createObjectStore(backend.config());
    expect(store.kind).toBe(backend.name);
    const body = Buffer.from(`hello ${MARKER}`);
    await a().put('docs/readme', body);
    await a().put('docs/a.txt', Buffer.from('second'));
    await a().put('docs-x', Buffer.from('third'));
    await a().put('blobs/00/ff', new Uint8Array());
    expect(Buffer.from(await a().get('docs/readme')).toString()).toBe(`hello ${MARKER}`);
    const info = await a().head('docs/readme');
    expect(info?.key).toBe('docs/readme');
    // The store keeps ciphertext: one sealed value per object.
    expect(info?.size).toBe(body.length + SEAL_OVERHEAD);
    expect(info?.modifiedAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(await a().head('docs/missing')).toBeUndefined();
    expect(await codeOf(a().get('docs/missing'))).toBe('object_not_found');
    // S3's order: byte order of the whole key ('-' < '/'), relative to the tenant's prefix.
    expect(await keysOf(a().list(''))).toEqual([
      'blobs/00/ff',
      'docs-x',
      'docs/a.txt',
      'docs/readme',
    ]);
    expect(await keysOf(a().list('docs/'))).toEqual(['docs/a.txt', 'docs/readme']);
    expect(await keysOf(a().list('docs'))).toEqual(['docs-x', 'docs/a.txt', 'docs/readme']);
    expect(await keysOf(a().list('nothing/'))).toEqual([]);
    expect((await a().get('blobs/00/ff')).byteLength).toBe(0);
    // The raw store sees the tenant prefix.
    expect(await keysOf(store.list(`tenants/${tenantA}/docs/`))).toEqual([
      `tenants/${tenantA}/docs/a.txt`,
      `tenants/${tenantA}/docs/readme`,
    ]);

    await a().delete(['docs-x', 'never-was']);
    expect(await a().head('docs-x')).toBeUndefined();
    expect(await a().deletePrefix('docs/')).toBe(2);
    expect(await keysOf(a().list(''))).toEqual(['blobs/00/ff']);
    expect(await a().deletePrefix('')).toBe(1);
    expect(await keysOf(a().list(''))).toEqual([]);
  });

  it('refuses bad keys with object_key_invalid and writes nothing', async () => {
    for (const key of ['../escape', '/abs', 'a//b', '.tmp/x', 'a/../../b', '']) {
      expect(await codeOf(a().put(key, Buffer.from(MARKER))), key).toBe('object_key_invalid');
      expect(await codeOf(a().get(key)), key).toBe('object_key_invalid');
    }
    expect(await codeOf(keysOf(a().list('../')))).toBe('object_key_invalid');
    expect(await codeOf(a().deletePrefix('/'))).toBe('object_key_invalid');
    expect(await codeOf(store.put('/etc/x', Buffer.from('x')))).toBe('object_key_invalid');
    expect(await keysOf(store.list(''))).toEqual([]);
  });

  it('a key is never both an object and the directory of others (object_key_invalid on both)', async () => {
    await a().put('tree/a/b', Buffer.from('leaf'));
    expect(await codeOf(a().put('tree/a', Buffer.from('over')))).toBe('object_key_invalid');
    expect(await codeOf(a().put('tree/a/b/c', Buffer.from('under')))).toBe('object_key_invalid');
    expect(await keysOf(a().list('tree/'))).toEqual(['tree/a/b']);
    expect(Buffer.from(await a().get('tree/a/b')).toString()).toBe('leaf');
    // Once the leaf is gone its name is free to be a directory.
    await a().delete(['tree/a/b']);
    await a().put('tree/a/b/c', Buffer.from('now fine'));
    expect(await a().deletePrefix('tree/')).toBe(1);
  });

  it('an overwrite is atomic: concurrent readers see the whole old or the whole new object', async () => {
    const size = 2 * 1024 * 1024;
    const bodyA = Buffer.alloc(size, 'A');
    const bodyB = Buffer.alloc(size, 'B');
    await a().put('big', bodyA);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 6; i += 1) await a().put('big', i % 2 === 0 ? bodyB : bodyA);
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const got = Buffer.from(await a().get('big'));
      expect(got.length).toBe(size);
      expect(got.equals(bodyA) || got.equals(bodyB)).toBe(true);
      reads += 1;
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
    expect(Buffer.from(await a().get('big')).equals(bodyA)).toBe(true);
    await a().delete(['big']);
  });

  it('tenant isolation: B cannot see A, and a copied ciphertext fails with object_integrity', async () => {
    await a().put('secret/doc', Buffer.from(MARKER));
    expect(await keysOf(b().list(''))).toEqual([]);
    expect(await b().head('secret/doc')).toBeUndefined();
    expect(await codeOf(b().get('secret/doc'))).toBe('object_not_found');
    // Someone with store access copies A's stored bytes into B's prefix, and to another key of A.
    const stored = await store.get(`tenants/${tenantA}/secret/doc`);
    await store.put(`tenants/${tenantB}/secret/doc`, stored);
    await store.put(`tenants/${tenantA}/secret/other`, stored);
    expect(await codeOf(b().get('secret/doc'))).toBe('object_integrity');
    expect(await codeOf(a().get('secret/other'))).toBe('object_integrity');
    // And a tampered byte is caught too.
    const tampered = Uint8Array.from(stored);
    tampered[tampered.length - 1]! ^= 0x40;
    await store.put(`tenants/${tenantA}/secret/doc`, tampered);
    expect(await codeOf(a().get('secret/doc'))).toBe('object_integrity');
    // B deleting its whole prefix never touches A's.
    expect(await b().deletePrefix('')).toBe(1);
    expect(await keysOf(a().list('secret/'))).toEqual(['secret/doc', 'secret/other']);
    await a().deletePrefix('');
  });

  it('every byte the store keeps is ciphertext: the plaintext marker is nowhere on disk', async () => {
    const bodies = [
      Buffer.from(MARKER),
      Buffer.concat([randomBytes(1000), Buffer.from(MARKER), randomBytes(1000)]),
      Buffer.from(MARKER.repeat(1000)),
    ];
    for (const [i, body] of bodies.entries()) await a().put(`marker/${i}`, body);
    const files = filesUnder(backend.storedDir());
    expect(files.length).toBeGreaterThanOrEqual(bodies.length);
    const hits = files.filter((file) => readFileSync(file).includes(MARKER));
    expect(hits).toEqual([]);
    for (const [i, body] of bodies.entries())
      expect(Buffer.from(await a().get(`marker/${i}`)).equals(body)).toBe(true);
    await a().deletePrefix('marker/');
  });
});

describe('s3 store: list pages', () => {
  it('lists every key in order across ListObjectsV2 pages', async () => {
    const s3 = harnessS3();
    const store = createObjectStore({ kind: 's3', ...s3, forcePathStyle: true, listPageSize: 2 });
    const prefix = `paging-${randomBytes(4).toString('hex')}/`;
    const keys = ['e', 'a', 'c/1', 'b', 'c/0'].map((k) => prefix + k);
    for (const key of keys) await store.put(key, Buffer.from(key));
    expect(await keysOf(store.list(prefix))).toEqual([...keys].sort());
    await store.delete(keys);
    expect(await keysOf(store.list(prefix))).toEqual([]);
  });
});

describe('fs store: file modes', () => {
  it('objects are private to the writing user by default', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cubicle-objects-modes-'));
    try {
      await createObjectStore({ kind: 'fs', root }).put('a/b/c', Buffer.from('x'));
      expect(statSync(join(root, 'a', 'b', 'c~')).mode & 0o7777).toBe(0o600);
      expect(statSync(join(root, 'a', 'b')).mode & 0o7777).toBe(0o700);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('under a setgid root (npm start: worker root, API unprivileged) objects and directories are shared with the group', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cubicle-objects-shared-'));
    try {
      chmodSync(root, 0o2770);
      await createObjectStore({ kind: 'fs', root }).put('a/b/c', Buffer.from('x'));
      expect(statSync(join(root, 'a', 'b', 'c~')).mode & 0o7777).toBe(0o660);
      expect(statSync(join(root, 'a')).mode & 0o7777).toBe(0o2770);
      expect(statSync(join(root, 'a', 'b')).mode & 0o7777).toBe(0o2770);
      expect(statSync(join(root, 'a', 'b', 'c~')).gid).toBe(statSync(root).gid);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('fs store: failed writes', () => {
  it('a put that cannot land leaves no object and no temp file behind', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cubicle-objects-fail-'));
    try {
      const store = createObjectStore({ kind: 'fs', root });
      await store.put('a/old', Buffer.from('old'));
      // A plain file where the key's directory must go: the write fails after its temp file.
      writeFileSync(join(root, 'b'), 'not a directory');
      expect(await codeOf(store.put('b/c', Buffer.from(MARKER)))).toBe('object_store_unavailable');
      expect(await store.head('b/c')).toBeUndefined();
      expect(readdirSync(join(root, '.tmp'))).toEqual([]);
      expect(await keysOf(store.list(''))).toEqual(['a/old']);
      expect(Buffer.from(await store.get('a/old')).toString()).toBe('old');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
