// Who listens on a TCP port of this machine, from /proc (Linux): the listening sockets' inodes
// in /proc/net/tcp{,6}, then the process holding one of them among /proc/<pid>/fd.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';

/** listeningInodes returns the inodes of sockets listening on `port` (any address, v4 or v6). */
function listeningInodes(port) {
  const inodes = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== LISTEN) continue;
      const localPort = Number.parseInt(fields[1].split(':').pop(), 16);
      if (localPort === port) inodes.add(fields[9]);
    }
  }
  return inodes;
}

function commandOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/**
 * portOwner answers whether something listens on TCP `port`: undefined when nothing does, else
 * `{ pid, command }` of the process holding the socket (pid undefined when /proc does not tell,
 * e.g. another user's process seen without root).
 */
export function portOwner(port) {
  const inodes = listeningInodes(Number(port));
  if (inodes.size === 0) return undefined;
  const wanted = new Set([...inodes].map((inode) => `socket:[${inode}]`));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds;
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (wanted.has(target)) return { pid: Number(entry), command: commandOf(entry) };
    }
  }
  return { pid: undefined, command: '' };
}

/** describeOwner says who holds a port in words: "pid 123 (python3 -m http.server 8080)". */
export function describeOwner(owner) {
  if (owner.pid === undefined) return 'another process (its pid is not visible here)';
  const command = owner.command.length > 120 ? `${owner.command.slice(0, 117)}…` : owner.command;
  return `pid ${owner.pid}${command ? ` (${command})` : ''}`;
}

/** portInUseMessage is what `npm start` prints when a port it needs is taken. */
export function portInUseMessage(port, owner, variable) {
  return `port ${port} is in use by ${describeOwner(owner)}: stop that process or choose another port with ${variable}=…`;
}
