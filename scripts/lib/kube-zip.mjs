// Reading Go module zips without dependencies: their entries (stored or deflated), the module's
// `h1:` hash (the one go.sum and the checksum database record), and extraction to a directory.
// Used to install a Go toolchain from the module proxy on a machine without a usable `go`.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { inflateRawSync } from 'node:zlib';

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

/**
 * zipEntries lists the files of a zip held in memory: `{ name, mode, read() }`. Only what Go
 * module zips use is supported (no zip64, stored or deflate); anything else throws.
 */
export function zipEntries(zip) {
  // The end-of-central-directory record sits in the last 64 KiB + 22 bytes.
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 65_557); at -= 1) {
    if (zip.readUInt32LE(at) === EOCD_SIGNATURE) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip file (no end of central directory)');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries = [];
  for (let i = 0; i < count; i += 1) {
    if (zip.readUInt32LE(at) !== CENTRAL_SIGNATURE)
      throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const externalAttributes = zip.readUInt32LE(at + 38);
    const localOffset = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/')) continue;
    if (compressedSize === 0xffffffff || localOffset === 0xffffffff)
      throw new Error('zip64 is not supported');
    const read = () => {
      if (zip.readUInt32LE(localOffset) !== LOCAL_SIGNATURE)
        throw new Error(`corrupt zip entry ${name}`);
      const start =
        localOffset + 30 + zip.readUInt16LE(localOffset + 26) + zip.readUInt16LE(localOffset + 28);
      const raw = zip.subarray(start, start + compressedSize);
      const data = method === 0 ? raw : method === 8 ? inflateRawSync(raw) : null;
      if (!data) throw new Error(`zip entry ${name}: unsupported compression method ${method}`);
      if (data.length !== size) throw new Error(`zip entry ${name}: size mismatch`);
      return data;
    };
    // Unix permissions live in the high 16 bits when the zip was made on Unix; Go's are 0644/0755.
    const mode = externalAttributes >>> 16 ? (externalAttributes >>> 16) & 0o777 : 0o644;
    entries.push({ name, mode, read });
  }
  return entries;
}

/**
 * moduleZipHash computes Go's dirhash "h1:" of a module zip: SHA-256 over the sorted lines
 * "<sha256 hex>  <file name>\n", base64-encoded. It matches go.sum and sum.golang.org.
 */
export function moduleZipHash(entries) {
  const lines = entries
    .map((entry) => ({
      name: entry.name,
      sum: createHash('sha256').update(entry.read()).digest('hex'),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, sum }) => `${sum}  ${name}\n`)
    .join('');
  return `h1:${createHash('sha256').update(lines).digest('base64')}`;
}

/** extractZip writes the entries under `prefix` into `dest` (prefix stripped), keeping executable bits. */
export function extractZip(entries, prefix, dest) {
  const root = resolve(dest);
  let written = 0;
  for (const entry of entries) {
    if (!entry.name.startsWith(prefix)) continue;
    const target = resolve(root, entry.name.slice(prefix.length));
    // A name with ../ must not write outside dest.
    if (relative(root, target).startsWith('..'))
      throw new Error(`zip entry escapes its directory: ${entry.name}`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, entry.read());
    chmodSync(target, entry.mode);
    written += 1;
  }
  if (written === 0) throw new Error(`no zip entries under ${prefix}`);
  return written;
}
