/** TarFile is one regular file of an archive. */
export interface TarFile {
  name: string;
  data: Buffer;
  mtime?: Date;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(file: TarFile): Buffer {
  const name = Buffer.from(file.name, 'utf8');
  if (name.length > 100) throw new Error(`tar entry name too long: ${file.name}`);
  const h = Buffer.alloc(512);
  name.copy(h, 0);
  h.write(octal(0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(file.data.length, 12), 124, 'latin1');
  h.write(octal(Math.floor((file.mtime ?? new Date()).getTime() / 1000), 12), 136, 'latin1');
  h.fill(0x20, 148, 156); // checksum is computed with its own field as spaces
  h.write('0', 156, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return h;
}

/**
 * writeTar builds a POSIX ustar archive of regular files (names up to 100 bytes, which the
 * recording's fixed names satisfy), ending with the two zero blocks readers expect.
 */
export function writeTar(files: TarFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(header(f), f.data);
    const pad = (512 - (f.data.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}
