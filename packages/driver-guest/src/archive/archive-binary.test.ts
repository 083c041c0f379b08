import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ARCHIVE_BINARY_TYPE,
  ARCHIVE_CHUNKS_HEADER,
  ArchiveScanRequest,
  formatChunkSpans,
  parseChunkSpans,
} from '@cubicle/contract/guest';
import { auth, buildGuest } from '../../test/helpers/build-guest.js';
import { scanHome } from './scan-home.js';
import { stagingOf } from './staging.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function guestWithHome(): Promise<{ app: FastifyInstance; home: string }> {
  const home = await mkdtemp(join(tmpdir(), 'archive-bin-'));
  const app = await buildGuest({ childEnv: { ...process.env, HOME: home } });
  cleanup.push(
    () => app.close(),
    () => rm(home, { recursive: true, force: true }),
  );
  return { app, home };
}

describe('guest archive, binary form', () => {
  it('reads chunks raw with their ids and lengths in a header, and stages them raw', async () => {
    const { app, home } = await guestWithHome();
    await writeFile(join(home, 'a.txt'), 'alpha');
    await writeFile(join(home, 'b.bin'), Buffer.alloc(70_000, 7));
    const scan = await scanHome(home, ArchiveScanRequest.parse({ paths: ['a.txt', 'b.bin'] }));
    const refs = scan.entries.flatMap((e) =>
      e.type === 'file' ? e.chunks.map((hash, index) => ({ path: e.path, index, hash })) : [],
    );

    const read = await app.inject({
      method: 'POST',
      url: '/v1/archive/read',
      headers: { ...auth, accept: ARCHIVE_BINARY_TYPE },
      payload: { chunks: refs },
    });
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-type']).toContain(ARCHIVE_BINARY_TYPE);
    const body = read.rawPayload;
    const spans = parseChunkSpans(
      read.headers[ARCHIVE_CHUNKS_HEADER] as string,
      body.length,
      refs.length,
    );
    expect(spans?.map((s) => s.hash)).toEqual(refs.map((r) => r.hash));
    expect(spans?.map((s) => s.length)).toEqual([5, 70_000]);
    expect(body.subarray(0, 5).toString()).toBe('alpha');

    // The same bytes staged raw into another home land under their ids.
    const other = await guestWithHome();
    const staged = await other.app.inject({
      method: 'POST',
      url: '/v1/archive/stage',
      headers: {
        ...auth,
        'content-type': ARCHIVE_BINARY_TYPE,
        [ARCHIVE_CHUNKS_HEADER]: formatChunkSpans(spans!),
      },
      payload: body,
    });
    expect(staged.statusCode).toBe(200);
    expect(staged.json()).toEqual({ staged: 2, staged_bytes: 70_005 });
    const names = (await readdir(stagingOf(other.home))).sort();
    expect(names).toEqual(refs.map((r) => r.hash).sort());
    const a = await readFile(join(stagingOf(other.home), refs[0]!.hash));
    expect(sha(a)).toBe(refs[0]!.hash);
  });

  it('refuses a raw stage whose chunk list does not add up or whose bytes are not their ids', async () => {
    const { app, home } = await guestWithHome();
    const bytes = Buffer.from('hello');
    const stage = (header: string, payload: Buffer) =>
      app.inject({
        method: 'POST',
        url: '/v1/archive/stage',
        headers: { ...auth, 'content-type': ARCHIVE_BINARY_TYPE, [ARCHIVE_CHUNKS_HEADER]: header },
        payload,
      });
    const short = await stage(formatChunkSpans([{ hash: sha(bytes), length: 4 }]), bytes);
    expect(short.statusCode).toBe(400);
    expect(short.json().error.code).toBe('validation_failed');
    const wrong = await stage(
      formatChunkSpans([{ hash: sha(Buffer.from('x')), length: 5 }]),
      bytes,
    );
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().error.code).toBe('conflict');
    await expect(readdir(stagingOf(home))).rejects.toThrow();
  });
});
