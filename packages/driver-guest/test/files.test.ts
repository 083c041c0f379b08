import {
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
  chmod,
  mkdir,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_WRITE_MAX_BYTES, GUEST_MAX_BODY_BYTES } from '@cubicle/contract/guest';
import { buildGuest, post } from './helpers/build-guest.js';

let app: FastifyInstance;
let dir: string;
beforeEach(async () => {
  app = await buildGuest();
  dir = await mkdtemp(join(tmpdir(), 'cubicle-files-'));
});
afterEach(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

describe('files', () => {
  it('writes atomically and reads back utf8 and base64, leaving no temporary file', async () => {
    const path = join(dir, 'note.txt');
    const write = await post(app, '/v1/files/write', { path, content: 'grüße ✓\n' });
    expect(write).toEqual({
      status: 200,
      body: { path, size: Buffer.byteLength('grüße ✓\n'), atomic: true },
    });
    expect(await readFile(path, 'utf8')).toBe('grüße ✓\n');
    expect(await readdir(dir)).toEqual(['note.txt']);
    expect((await stat(path)).mode & 0o777).toBe(0o644);

    const read = await post(app, '/v1/files/read', { path });
    expect(read.body).toMatchObject({
      content: 'grüße ✓\n',
      offset: 0,
      eof: true,
      size: write.body.size,
    });
    const bytes = Buffer.from([0, 255, 1, 2]);
    await post(app, '/v1/files/write', {
      path,
      content: bytes.toString('base64'),
      encoding: 'base64',
    });
    const raw = await post(app, '/v1/files/read', { path, encoding: 'base64' });
    expect(Buffer.from(raw.body.content as string, 'base64')).toEqual(bytes);
  });

  it('an atomic rewrite keeps the mode of an existing file unless one is given', async () => {
    const path = join(dir, 'script.sh');
    await writeFile(path, 'old');
    await chmod(path, 0o750);
    await post(app, '/v1/files/write', { path, content: 'new' });
    expect((await stat(path)).mode & 0o777).toBe(0o750);
    await post(app, '/v1/files/write', { path, content: 'newer', mode: '600' });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const plain = await post(app, '/v1/files/write', { path, content: 'plain', atomic: false });
    expect(plain.body.atomic).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('plain');
  });

  it('reads byte ranges and refuses a range that cuts a UTF-8 character', async () => {
    const path = join(dir, 'range.txt');
    await writeFile(path, '0123456789é');
    const mid = await post(app, '/v1/files/read', { path, offset: 3, length: 4 });
    expect(mid.body).toMatchObject({ content: '3456', offset: 3, length: 4, size: 12, eof: false });
    const tail = await post(app, '/v1/files/read', { path, offset: 8 });
    expect(tail.body).toMatchObject({ content: '89é', length: 4, eof: true });
    const past = await post(app, '/v1/files/read', { path, offset: 100 });
    expect(past.body).toMatchObject({ content: '', length: 0, eof: true });
    const cut = await post(app, '/v1/files/read', { path, offset: 10, length: 1 });
    expect(cut.status).toBe(400);
    expect(cut.body.error?.code).toBe('validation_failed');
  });

  it('creates parents on request and otherwise says the directory is missing', async () => {
    const path = join(dir, 'a/b/c.txt');
    const missing = await post(app, '/v1/files/write', { path, content: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body.error?.code).toBe('not_found');
    const made = await post(app, '/v1/files/write', { path, content: 'x', create_parents: true });
    expect(made.status).toBe(200);
    const onDir = await post(app, '/v1/files/write', { path: join(dir, 'a'), content: 'x' });
    expect(onDir.status).toBe(409);
  });

  it('lists sorted entries with truncation, and stats without following symlinks', async () => {
    for (const name of ['b', 'a', 'c']) await writeFile(join(dir, name), name);
    await mkdir(join(dir, 'sub'));
    await symlink(join(dir, 'a'), join(dir, 'link'));
    const list = await post(app, '/v1/files/list', { path: dir });
    const entries = list.body.entries as { name: string; type: string }[];
    expect(entries.map((e) => `${e.name}:${e.type}`)).toEqual([
      'a:file',
      'b:file',
      'c:file',
      'link:symlink',
      'sub:directory',
    ]);
    expect(list.body.truncated).toBe(false);
    const short = await post(app, '/v1/files/list', { path: dir, max_entries: 2 });
    expect(short.body).toMatchObject({ truncated: true });
    expect(short.body.entries).toHaveLength(2);
    const link = await post(app, '/v1/files/stat', { path: join(dir, 'link') });
    expect(link.body).toMatchObject({ type: 'symlink', symlink_target: join(dir, 'a') });
    const missing = await post(app, '/v1/files/stat', { path: join(dir, 'nope') });
    expect(missing.status).toBe(404);
    const notDir = await post(app, '/v1/files/list', { path: join(dir, 'a') });
    expect(notDir.status).toBe(409);
  });

  it('deletes files, refuses a non-empty directory without recursive, and is idempotent with missing_ok', async () => {
    await mkdir(join(dir, 'tree/deep'), { recursive: true });
    await writeFile(join(dir, 'tree/deep/f'), 'x');
    const refused = await post(app, '/v1/files/delete', { path: join(dir, 'tree') });
    expect(refused.status).toBe(409);
    const deleted = await post(app, '/v1/files/delete', {
      path: join(dir, 'tree'),
      recursive: true,
    });
    expect(deleted.body).toEqual({ path: join(dir, 'tree'), deleted: true });
    const again = await post(app, '/v1/files/delete', { path: join(dir, 'tree') });
    expect(again.status).toBe(404);
    const idempotent = await post(app, '/v1/files/delete', {
      path: join(dir, 'tree'),
      missing_ok: true,
    });
    expect(idempotent.body).toEqual({ path: join(dir, 'tree'), deleted: false });
    const root = await post(app, '/v1/files/delete', { path: '/', recursive: true });
    expect(root.status).toBe(400);
  });

  it('refuses oversize content with 413 before writing anything', async () => {
    const path = join(dir, 'big.bin');
    const over = Buffer.alloc(FILE_WRITE_MAX_BYTES + 1, 7).toString('base64');
    const res = await post(app, '/v1/files/write', { path, content: over, encoding: 'base64' });
    expect(res.status).toBe(413);
    expect(res.body.error?.code).toBe('payload_too_large');
    expect(await readdir(dir)).toEqual([]);

    const body = await app.inject({
      method: 'POST',
      url: '/v1/files/write',
      headers: { authorization: `Bearer ${'t'.repeat(40)}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ path, content: 'x'.repeat(GUEST_MAX_BODY_BYTES) }),
    });
    expect(body.statusCode).toBe(413);
    expect(body.json().error.code).toBe('payload_too_large');
  });

  it('applies the daemon’s own smaller file limit to writes and reads', async () => {
    await app.close();
    app = await buildGuest({ maxFileBytes: 1024 });
    const path = join(dir, 'small');
    const res = await post(app, '/v1/files/write', { path, content: 'x'.repeat(1025) });
    expect(res.status).toBe(413);
    await writeFile(path, 'y'.repeat(3000));
    const read = await post(app, '/v1/files/read', { path });
    expect(read.body).toMatchObject({ length: 1024, eof: false, size: 3000 });
  });
});
