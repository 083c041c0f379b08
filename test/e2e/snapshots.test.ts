import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

const HOME = '/home/sandbox';
const NOTE = `${HOME}/Documents/note.txt`;
// A marker that occurs nowhere else: the store must hold it only as ciphertext.
const MARKER = `snapshot-plaintext-${Math.random().toString(36).slice(2)}`;

/**
 * Issue 34 snapshots and forks end to end, on real sandboxed desktops and the real (fs) object
 * store: a claim's Documents are snapshotted through its guest, sealed; three forks each get the
 * file before the call answers and are independent of each other; a retry of the fork call with
 * its Idempotency-Key answers the same three claims; another tenant cannot read, fork or delete
 * it (404); deleting it removes its objects.
 */
describe('snapshots and forks', () => {
  let s: Stack;
  let source: string;
  let snapshotId: string;
  let forks: string[] = [];
  const call = (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = s.auth,
  ) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  const readNote = async (claimId: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/files/read`, { path: NOTE });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().content as string;
  };
  /** Every file under the fs store's directory, as text. */
  const storedFiles = async (dir: string): Promise<{ path: string; text: string }[]> => {
    const out: { path: string; text: string }[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      out.push({ path, text: await readFile(path, 'latin1') });
    }
    return out;
  };

  beforeAll(async () => {
    s = await startStack();
    const pool = await call('PUT', '/v1/pools/snap', {
      image: 'local',
      autoscaling: { min: 0, initial: 4, max: 6 },
    });
    expect(pool.statusCode, pool.body).toBe(201);
    // A desktop that never turns warm says why in the worker's output.
    await waitFor(
      async () => (await call('GET', '/v1/pools/snap')).json().counts.warm >= 1,
      180_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', '/v1/pools/snap/claims', { wait_seconds: 120 });
    expect(claim.statusCode, claim.body).toBe(201);
    source = claim.json().id;
    const write = await call('POST', `/v1/claims/${source}/files/write`, {
      path: NOTE,
      content: `hello from the source ${MARKER}`,
      create_parents: true,
    });
    expect(write.statusCode, write.body).toBe(200);
  }, 240_000);
  afterAll(async () => {
    await s?.close();
  });

  it("snapshots a claim's Documents into the object store, sealed", async () => {
    const res = await call('POST', `/v1/claims/${source}/snapshots`, {
      name: 'docs',
      paths: ['Documents'],
    });
    expect(res.statusCode, res.body).toBe(201);
    const snap = res.json();
    snapshotId = snap.id;
    expect(snap).toMatchObject({
      name: 'docs',
      status: 'ready',
      paths: ['Documents'],
      file_count: 1,
      source: { claim_id: source, pool: 'snap' },
    });
    expect(snap.size_bytes).toBe(`hello from the source ${MARKER}`.length);
    expect(snap.stored_bytes).toBeGreaterThan(snap.size_bytes);
    const got = await call('GET', `/v1/snapshots/${snapshotId}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(snap);
    const list = await call('GET', '/v1/snapshots');
    expect(list.json().data.map((x: { id: string }) => x.id)).toEqual([snapshotId]);
    // The store holds the snapshot's objects, and none of them (nor any other file) in plaintext.
    const prefix = `tenants/${s.tenantId}/snapshots/${snapshotId}/`;
    const keys: string[] = [];
    for await (const o of s.objectStore.store.list(prefix)) keys.push(o.key);
    expect(keys.length).toBe(2); // the one chunk and the manifest
    const files = await storedFiles(s.objectStore.dir);
    expect(files.length).toBeGreaterThan(0);
    expect(files.filter((f) => f.text.includes(MARKER) || f.text.includes('note.txt'))).toEqual([]);
  });

  it('forks three independent claims, each with the file before the call answers', async () => {
    const key = `fork-${Math.random().toString(36).slice(2)}`;
    const body = { from_snapshot: snapshotId, count: 3, wait_seconds: 120 };
    const res = await call('POST', '/v1/pools/snap/claims', body, {
      ...s.auth,
      'idempotency-key': key,
    });
    expect(res.statusCode, res.body).toBe(201);
    const claims = res.json().claims as { id: string; status: string; sandbox: { id: string } }[];
    expect(claims).toHaveLength(3);
    expect(claims.every((c) => c.status === 'active')).toBe(true);
    forks = claims.map((c) => c.id);
    expect(new Set(claims.map((c) => c.sandbox.id)).size).toBe(3);
    expect(forks).not.toContain(source);
    for (const id of forks) expect(await readNote(id)).toBe(`hello from the source ${MARKER}`);

    // A change in one fork is in neither of the others, nor in the source.
    const write = await call('POST', `/v1/claims/${forks[0]}/files/write`, {
      path: NOTE,
      content: 'changed in fork 0',
    });
    expect(write.statusCode, write.body).toBe(200);
    expect(await readNote(forks[0]!)).toBe('changed in fork 0');
    expect(await readNote(forks[1]!)).toBe(`hello from the source ${MARKER}`);
    expect(await readNote(forks[2]!)).toBe(`hello from the source ${MARKER}`);
    expect(await readNote(source)).toBe(`hello from the source ${MARKER}`);

    // The batch is idempotent: the same key and body answer the same three claims, restoring nothing.
    const again = await call('POST', '/v1/pools/snap/claims', body, {
      ...s.auth,
      'idempotency-key': key,
    });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().claims.map((c: { id: string }) => c.id)).toEqual(forks);
    expect(await readNote(forks[0]!)).toBe('changed in fork 0');
    // A plain claim request answers one Claim as it always did (no batch shape).
    const single = await call('POST', '/v1/pools/snap/claims', {
      from_snapshot: snapshotId,
      wait_seconds: 120,
    });
    expect(single.statusCode, single.body).toBe(201);
    expect(single.json().id).toMatch(/^clm_/);
    expect(await readNote(single.json().id)).toBe(`hello from the source ${MARKER}`);
    await call('DELETE', `/v1/claims/${single.json().id}`);
  }, 300_000);

  it('another tenant can neither read, fork nor delete it (404)', async () => {
    const other = s.other.auth;
    expect((await call('GET', `/v1/snapshots/${snapshotId}`, undefined, other)).statusCode).toBe(
      404,
    );
    expect((await call('GET', '/v1/snapshots', undefined, other)).json().data).toEqual([]);
    const pool = await call(
      'PUT',
      '/v1/pools/other',
      { image: 'local', autoscaling: { min: 0, initial: 0, max: 1 } },
      other,
    );
    expect(pool.statusCode, pool.body).toBe(201);
    const fork = await call('POST', '/v1/pools/other/claims', { from_snapshot: snapshotId }, other);
    expect(fork.statusCode, fork.body).toBe(404);
    expect(fork.json().error.code).toBe('not_found');
    expect(await s.db.claim.count({ where: { tenantId: s.other.tenantId } })).toBe(0);
    expect((await call('DELETE', `/v1/snapshots/${snapshotId}`, undefined, other)).statusCode).toBe(
      404,
    );
    expect((await call('GET', `/v1/snapshots/${snapshotId}`)).statusCode).toBe(200);
  });

  it('keeps a tenant within its snapshot quota, and the retention sweep deletes expired ones', async () => {
    const listKeys = async (prefix: string) => {
      const keys: string[] = [];
      for await (const o of s.objectStore.store.list(prefix)) keys.push(o.key);
      return keys;
    };
    const snapshots = `tenants/${s.tenantId}/snapshots/`;
    const before = await listKeys(snapshots);
    const used = (await call('GET', `/v1/snapshots/${snapshotId}`)).json().stored_bytes as number;
    // Room for a few bytes more: the new snapshot is packed, found over, and nothing of it kept.
    await s.db.tenant.update({
      where: { id: s.tenantId },
      data: { maxSnapshotBytes: BigInt(used + 5) },
    });
    const over = await call('POST', `/v1/claims/${source}/snapshots`, { paths: ['Documents'] });
    expect(over.statusCode, over.body).toBe(429);
    expect(over.json().error).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'snapshot_bytes', limit: used + 5 },
    });
    expect(await s.db.snapshot.count({ where: { tenantId: s.tenantId } })).toBe(1);
    expect(await listKeys(snapshots)).toEqual(before);
    await s.db.tenant.update({
      where: { id: s.tenantId },
      data: { maxSnapshotBytes: 10n * 1024n ** 3n },
    });
    // Past its retention, the worker's periodic sweep deletes a snapshot and its objects.
    const made = await call('POST', `/v1/claims/${source}/snapshots`, { paths: ['Documents'] });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    expect((await listKeys(`${snapshots}${id}/`)).length).toBe(2);
    await s.db.snapshot.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await waitFor(
      async () => (await call('GET', `/v1/snapshots/${id}`)).statusCode === 404,
      60_000,
      250,
    );
    expect(await listKeys(`${snapshots}${id}/`)).toEqual([]);
    expect((await call('GET', `/v1/snapshots/${snapshotId}`)).statusCode).toBe(200);
  });

  it('deleting a snapshot removes its objects; the forks keep their files', async () => {
    const prefix = `tenants/${s.tenantId}/snapshots/${snapshotId}/`;
    const del = await call('DELETE', `/v1/snapshots/${snapshotId}`);
    expect(del.statusCode, del.body).toBe(204);
    const keys: string[] = [];
    for await (const o of s.objectStore.store.list(prefix)) keys.push(o.key);
    expect(keys).toEqual([]);
    expect((await call('GET', `/v1/snapshots/${snapshotId}`)).statusCode).toBe(404);
    const fork = await call('POST', '/v1/pools/snap/claims', { from_snapshot: snapshotId });
    expect(fork.statusCode).toBe(404);
    expect(await readNote(forks[1]!)).toBe(`hello from the source ${MARKER}`);
  });
});
