import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/** XAuthCookie is what the connection setup sends: protocol name and its data. */
export interface XAuthCookie {
  name: string;
  data: Buffer;
}

const FAMILY_LOCAL = 256;
const FAMILY_WILD = 65535;

/**
 * parseXAuthority reads the entries of an Xauthority file (big-endian length-prefixed fields:
 * family, address, display number, auth name, auth data).
 */
export function parseXAuthority(
  buf: Buffer,
): { family: number; address: string; display: string; name: string; data: Buffer }[] {
  const out = [];
  let off = 0;
  const field = (): Buffer => {
    const len = buf.readUInt16BE(off);
    const value = buf.subarray(off + 2, off + 2 + len);
    off += 2 + len;
    return value;
  };
  while (off + 2 <= buf.length) {
    const family = buf.readUInt16BE(off);
    off += 2;
    const address = field().toString('latin1');
    const display = field().toString('latin1');
    const name = field().toString('latin1');
    const data = Buffer.from(field());
    out.push({ family, address, display, name, data });
  }
  return out;
}

/**
 * findXAuthCookie returns the cookie for a local display, or null: Xvfb started without `-auth`
 * accepts any local client, and a missing or unreadable file is then not an error.
 */
export async function findXAuthCookie(
  displayNumber: number,
  file: string | undefined,
): Promise<XAuthCookie | null> {
  if (!file) return null;
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch {
    return null;
  }
  const host = hostname();
  for (const e of parseXAuthority(buf)) {
    const hostMatches =
      e.family === FAMILY_WILD || (e.family === FAMILY_LOCAL && e.address === host);
    if (hostMatches && (e.display === '' || e.display === String(displayNumber)))
      return { name: e.name, data: e.data };
  }
  return null;
}
