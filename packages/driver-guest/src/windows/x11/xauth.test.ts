import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findXAuthCookie, parseXAuthority } from './xauth.js';

function entry(family: number, address: string, display: string, name: string, data: Buffer) {
  const field = (b: Buffer) => Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  return Buffer.concat([
    Buffer.from([family >> 8, family & 0xff]),
    field(Buffer.from(address)),
    field(Buffer.from(display)),
    field(Buffer.from(name)),
    field(data),
  ]);
}

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('Xauthority', () => {
  it('parses entries and picks the local cookie of the display', async () => {
    const cookie = Buffer.from('0123456789abcdef');
    const buf = Buffer.concat([
      entry(256, hostname(), '3', 'MIT-MAGIC-COOKIE-1', Buffer.from('other-display-...')),
      entry(256, hostname(), '7', 'MIT-MAGIC-COOKIE-1', cookie),
    ]);
    expect(parseXAuthority(buf).map((e) => e.display)).toEqual(['3', '7']);
    dir = mkdtempSync(join(tmpdir(), 'xauth-'));
    writeFileSync(join(dir, 'auth'), buf);
    const found = await findXAuthCookie(7, join(dir, 'auth'));
    expect(found?.name).toBe('MIT-MAGIC-COOKIE-1');
    expect(found?.data.equals(cookie)).toBe(true);
    expect(await findXAuthCookie(9, join(dir, 'auth'))).toBeNull();
  });

  it('treats a missing file as no authentication', async () => {
    expect(await findXAuthCookie(1, '/nonexistent/xauth')).toBeNull();
    expect(await findXAuthCookie(1, undefined)).toBeNull();
  });
});
