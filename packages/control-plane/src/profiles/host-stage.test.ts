import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ARCHIVE_HOST_STAGE_NAME } from '@cubicle/contract/guest';
import { HostChunkFiles, hostStageOf } from './host-stage.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
const newDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'host-stage-'));
  dirs.push(dir);
  return dir;
};
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const unixUrl = (socket: string) => `http+unix://${encodeURIComponent(socket)}`;

describe('host stages of local desktops', () => {
  it("finds the stage beside a unix socket guest's socket directory, and nothing for others", async () => {
    const session = await newDir();
    await mkdir(join(session, 'sock'));
    const socket = join(session, 'sock', 'guest.sock');
    expect(await hostStageOf(unixUrl(socket))).toBeNull(); // a desktop without one streams
    await mkdir(join(session, ARCHIVE_HOST_STAGE_NAME));
    expect(await hostStageOf(unixUrl(socket))).toBe(join(session, ARCHIVE_HOST_STAGE_NAME));
    expect(await hostStageOf('http://127.0.0.1:4000')).toBeNull();
    expect(await hostStageOf(null)).toBeNull();
  });

  it('writes each chunk once, checked against its id, links it into further stages and clears them all', async () => {
    const a = await newDir();
    const b = await newDir();
    const one = Buffer.from('chunk one');
    const two = Buffer.alloc(70_000, 3);
    const store = new Map([one, two].map((bytes) => [sha256(bytes), bytes]));
    const reads: string[] = [];
    const files = new HostChunkFiles(async (hash) => {
      reads.push(hash);
      return store.get(hash)!;
    });
    await Promise.all([files.place(a, [...store.keys()]), files.place(b, [...store.keys()])]);
    expect(reads.sort()).toEqual([...store.keys()].sort());
    for (const [hash, bytes] of store) {
      expect(await readFile(join(b, hash))).toEqual(bytes);
      const [sa, sb] = await Promise.all([stat(join(a, hash)), stat(join(b, hash))]);
      expect(sb.ino).toBe(sa.ino); // one file, two names
      expect(sa.mode & 0o777).toBe(0o644);
    }
    await files.clear();
    expect(await readdir(a)).toEqual([]);
    expect(await readdir(b)).toEqual([]);
  });

  it('refuses a stored chunk whose bytes are not its id, leaving nothing staged', async () => {
    const a = await newDir();
    const claimed = sha256(Buffer.from('what the manifest names'));
    const files = new HostChunkFiles(() => Promise.resolve(Buffer.from('other bytes')));
    await expect(files.place(a, [claimed])).rejects.toMatchObject({ code: 'object_integrity' });
    expect(await readdir(a)).toEqual([]);
    await writeFile(join(a, 'unrelated'), 'x'); // clear only removes what it placed
    await files.clear();
    expect(await readdir(a)).toEqual(['unrelated']);
  });
});
