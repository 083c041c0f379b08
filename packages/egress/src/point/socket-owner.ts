import { readdir, readFile, readlink, stat } from 'node:fs/promises';

/** How long the list of a namespace's processes is reused (a denial burst scans /proc once). */
const PIDS_TTL_MS = 2_000;
/** Bounds on the scan, so a sandbox with very many processes or descriptors costs a bounded time. */
const MAX_PIDS = 4_096;
const MAX_FDS_PER_PID = 4_096;

/**
 * parseProcNet finds the socket inode of the local IPv4 address `ip:port` in the text of a
 * /proc/<pid>/net/{tcp,udp} table (addresses are little-endian hex: 10.217.0.2:40000 is
 * 0200D90A:9C40). null when no socket has that address.
 */
export function parseProcNet(text: string, ip: string, port: number): number | null {
  const octets = ip.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !(o >= 0 && o <= 255))) return null;
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  const local = `${octets
    .reverse()
    .map((o) => hex(o, 2))
    .join('')}:${hex(port, 4)}`;
  for (const line of text.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols[1] === local && cols[9] && cols[9] !== '0') return Number(cols[9]);
  }
  return null;
}

/**
 * SocketOwners names the process behind a sandbox's connection for denial reports: it lists the
 * host's processes in the sandbox's network namespace (their /proc/<pid>/ns/net is the
 * namespace file's inode), finds the socket with the connection's local address in that
 * namespace's /proc/<pid>/net table, and the process holding that socket among their
 * descriptors. The answer reads `curl (pid 42)`, with the pid as the sandbox sees it (NSpid).
 * It is asked only for denials, before the connection is refused (the sandbox's socket still
 * exists then); it answers null when the owner cannot be found (the socket already closed, a
 * descriptor passed away, a race with exit) — never a guess. Needs root (other users' /proc).
 */
export class SocketOwners {
  private pids: { at: number; pids: Promise<number[]> } | null = null;

  constructor(private readonly netnsPath: string) {}

  async ownerOf(protocol: 'tcp' | 'udp', ip: string, port: number): Promise<string | null> {
    // The cached process list first (a burst of denials from one process); a miss rescans, since
    // a short-lived process (a resolver call, curl) may have started after the list was made.
    return (
      (await this.lookup(protocol, ip, port, false)) ??
      (await this.lookup(protocol, ip, port, true))
    );
  }

  private async lookup(
    protocol: 'tcp' | 'udp',
    ip: string,
    port: number,
    fresh: boolean,
  ): Promise<string | null> {
    try {
      const pids = await this.namespacePids(fresh);
      for (const tablePid of pids) {
        const table = await readFile(`/proc/${tablePid}/net/${protocol}`, 'utf8').catch(() => null);
        if (table === null) continue; // exited: any other process of the namespace has the table
        const inode = parseProcNet(table, ip, port);
        if (inode === null) return null;
        const target = `socket:[${inode}]`;
        for (const pid of pids) if (await holds(pid, target)) return await describe(pid);
        return null;
      }
      return null;
    } catch {
      return null;
    }
  }

  private namespacePids(fresh: boolean): Promise<number[]> {
    if (!fresh && this.pids && Date.now() - this.pids.at < PIDS_TTL_MS) return this.pids.pids;
    const pids = listNamespacePids(this.netnsPath);
    this.pids = { at: Date.now(), pids };
    return pids;
  }
}

async function listNamespacePids(netnsPath: string): Promise<number[]> {
  const want = `net:[${(await stat(netnsPath)).ino}]`;
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ns = await readlink(`/proc/${name}/ns/net`).catch(() => null);
    if (ns === want) found.push(Number(name));
    if (found.length >= MAX_PIDS) break;
  }
  return found;
}

async function holds(pid: number, target: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds.slice(0, MAX_FDS_PER_PID))
    if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => null)) === target) return true;
  return false;
}

async function describe(pid: number): Promise<string | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  if (status === null) return null;
  const name = /^Name:\s*(.*)$/m.exec(status)?.[1]?.trim() ?? '?';
  // NSpid lists the pid in each nested namespace; the last is the sandbox's own view.
  const inner = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/).at(-1) ?? String(pid);
  return `${name} (pid ${inner})`;
}
