// Reads every process of a sandbox for a value, from the host (root): the processes are those in
// the sandbox's network namespace (the egress link's, named after its desktop), their memory the
// writable mappings of /proc/<pid>/mem. A test's proof that an injected credential is nowhere in
// a sandbox process's memory, not only in what the sandbox can list.
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  statSync,
} from 'node:fs';

/** sandboxPids lists the host pids in the egress namespace whose name ends with `-<idSuffix>`. */
export function sandboxPids(idSuffix: string): number[] {
  const netns = readdirSync('/run/netns').find((n) => n.endsWith(`-${idSuffix}`));
  if (!netns) throw new Error(`no egress namespace for ${idSuffix}`);
  const want = `net:[${statSync(`/run/netns/${netns}`).ino}]`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/ns/net`) === want;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * memoryHolding answers the pids (of `pids`) whose writable memory contains `needle`, and how
 * many bytes were searched. Regions that vanish while being read are skipped.
 */
export function memoryHolding(pids: number[], needle: string): { pids: number[]; bytes: number } {
  const wanted = Buffer.from(needle);
  const found: number[] = [];
  let bytes = 0;
  for (const pid of pids) {
    let maps: string;
    let fd: number;
    try {
      maps = readFileSync(`/proc/${pid}/maps`, 'utf8');
      fd = openSync(`/proc/${pid}/mem`, 'r');
    } catch {
      continue;
    }
    try {
      for (const line of maps.split('\n')) {
        const [range, perms] = line.split(' ');
        // Writable mappings only: a value a process received lives in its heap, stacks or anonymous
        // memory; read-only mappings are files (searched as files) and shared libraries.
        if (!range || !perms?.startsWith('rw') || line.includes('[vvar]')) continue;
        const [start, end] = range.split('-').map((h) => BigInt(`0x${h}`));
        let at = start!;
        // 8 MiB at a time, overlapping by the needle's length so a value across chunks is seen.
        while (at < end!) {
          const size = Number(end! - at < 8n << 20n ? end! - at : 8n << 20n);
          const chunk = Buffer.alloc(size);
          let read = 0;
          try {
            read = readSync(fd, chunk, 0, size, at);
          } catch {
            break;
          }
          bytes += read;
          if (chunk.subarray(0, read).includes(wanted)) {
            found.push(pid);
            break;
          }
          if (read < size) break;
          at += BigInt(Math.max(1, size - wanted.length));
        }
        if (found.at(-1) === pid) break;
      }
    } finally {
      closeSync(fd);
    }
  }
  return { pids: found, bytes };
}
