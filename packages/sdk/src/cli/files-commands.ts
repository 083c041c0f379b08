import { readFileSync, writeFileSync } from 'node:fs';
import type { Claim, ClaimHandle } from '../claim-handle.js';
import type { Cubicle } from '../client.js';
import { UsageError } from './args.js';
import { flag, print, stringOption, table, type CommandSpec } from './command.js';
import { ExitCodes } from './exit-codes.js';
import type { Io } from './io.js';

/** The guest's limits per call (FILE_READ_MAX_BYTES / FILE_WRITE_MAX_BYTES of the contract). */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;
const WRITE_MAX_BYTES = 8 * 1024 * 1024;

const claimOf = (cubicle: Cubicle, id: string): ClaimHandle =>
  cubicle.claims.handle({ id } as Claim);

/** readAll reads a whole file in ranges, as bytes (base64 on the wire: any file, not only text). */
async function readAll(claim: ClaimHandle, path: string, signal: AbortSignal) {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const part = await claim.files.read(
      { path, offset, length: READ_CHUNK_BYTES, encoding: 'base64' },
      { signal },
    );
    chunks.push(Buffer.from(part.content, 'base64'));
    offset += part.length;
    if (part.eof || part.length === 0) return Buffer.concat(chunks);
  }
}

async function readStdin(io: Io): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export const fileCommands: CommandSpec[] = [
  {
    path: ['files', 'ls'],
    args: '<claim> <path>',
    summary: 'list a directory in the desktop',
    run: async ({ cubicle, args, io, json }) => {
      const [id, path] = args.positionals as [string, string];
      const listing = await claimOf(cubicle, id).files.list({ path });
      const rows = listing.entries.map((e) => [
        e.type === 'directory' ? 'd' : e.type === 'symlink' ? 'l' : '-',
        e.mode,
        String(e.size),
        e.mtime,
        e.name,
      ]);
      const more = listing.truncated ? '\n(more entries were left out)' : '';
      print(io, json, listing, `${table(rows, '(empty directory)')}${more}`);
      return ExitCodes.ok;
    },
  },
  {
    path: ['files', 'read'],
    args: '<claim> <path>',
    summary: 'print a file of the desktop (or save it with -o)',
    details: 'With --json: {path, size, content_base64}.',
    options: {
      output: { type: 'string', short: 'o', value: 'file', description: 'save to this file' },
    },
    run: async ({ cubicle, args, io, json, signal }) => {
      const [id, path] = args.positionals as [string, string];
      const bytes = await readAll(claimOf(cubicle, id), path, signal);
      const out = stringOption(args, 'output');
      if (out !== undefined) {
        writeFileSync(out, bytes);
        print(
          io,
          json,
          { path, size: bytes.length, output: out },
          `${out} (${bytes.length} bytes)`,
        );
      } else if (json) {
        print(io, json, { path, size: bytes.length, content_base64: bytes.toString('base64') }, '');
      } else {
        io.stdout.write(bytes);
      }
      return ExitCodes.ok;
    },
  },
  {
    path: ['files', 'write'],
    args: '<claim> <path> [local-file]',
    summary: 'write a file in the desktop from a local file (or stdin)',
    details: `Replaces the file atomically; at most ${WRITE_MAX_BYTES / 1024 / 1024} MiB.`,
    options: {
      parents: { type: 'boolean', short: 'p', description: 'create missing parent directories' },
      mode: { type: 'string', value: 'octal', description: 'mode of a new file, e.g. 0755' },
    },
    run: async ({ cubicle, args, io, json }) => {
      const [id, path, local] = args.positionals as [string, string, string | undefined];
      let bytes: Buffer;
      if (local === undefined || local === '-') bytes = await readStdin(io);
      else {
        try {
          bytes = readFileSync(local);
        } catch {
          throw new UsageError(`cannot read ${local}`);
        }
      }
      if (bytes.length > WRITE_MAX_BYTES)
        throw new UsageError(`${bytes.length} bytes is more than one write takes (8 MiB)`);
      const mode = stringOption(args, 'mode');
      const written = await claimOf(cubicle, id).files.write({
        path,
        content: bytes.toString('base64'),
        encoding: 'base64',
        create_parents: flag(args, 'parents'),
        ...(mode !== undefined ? { mode } : {}),
      });
      print(io, json, written, `wrote ${written.path} (${written.size} bytes)`);
      return ExitCodes.ok;
    },
  },
];
