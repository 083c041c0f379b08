// Whose Postgres backend is whose: a backend serves one client connection, and on a unix socket
// Postgres cannot say which process is at the other end (pg_stat_activity's client_port is -1
// and our pools set no application_name). The kernel can: `ss -xpn` lists each unix socket's
// inode, its peer's inode and the processes holding it. bench:claim uses this to split the
// Postgres CPU of a burst into what the API's own connections cost and what the rest of the
// cluster did meanwhile (the worker's statements, autovacuum, checkpointer), which is not the
// claim path's cost even though it runs in the same process tree.
import { execFileSync } from 'node:child_process';

/**
 * unixSocketOwners: every unix socket of the machine by inode, with its peer's inode and the
 * pids holding it (empty when ss is missing or fails: then nothing is attributed).
 */
function unixSockets() {
  let text;
  try {
    text = execFileSync('ss', ['-xpnH'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return new Map();
  }
  const sockets = new Map();
  for (const line of text.split('\n')) {
    // u_str ESTAB 0 0 <local path|*> <inode> <peer path|*> <peer inode> users:(("x",pid=1,fd=2),…)
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const inode = fields[5];
    const peer = fields[7];
    const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => m[1]);
    sockets.set(inode, { peer, pids });
  }
  return sockets;
}

/**
 * backendOwners maps each backend pid in `backendPids` to the name of the process at the other
 * end of its connection, looked up in `names` (pid → name, e.g. the API and the worker); a
 * backend whose client is not named (or that has no client: autovacuum, the checkpointer) is
 * absent.
 */
export function backendOwners(backendPids, names) {
  const wanted = new Set(backendPids.map(String));
  const owners = new Map();
  const sockets = unixSockets();
  for (const { peer, pids } of sockets.values()) {
    const backend = pids.find((pid) => wanted.has(pid));
    if (!backend) continue;
    const client = sockets.get(peer)?.pids.find((pid) => names.has(pid));
    if (client) owners.set(backend, names.get(client));
  }
  return owners;
}

/**
 * spentByOwner sums a tree's precise CPU between two snapshots (Map pid → ms, as
 * preciseTreeSnapshot gives them) by owner name (backendOwners); the rest under `other`.
 */
export function spentByOwner(before, after, owners) {
  const spent = {};
  for (const [pid, now] of after) {
    const name = owners.get(pid) ?? 'other';
    spent[name] = (spent[name] ?? 0) + Math.max(0, now - (before.get(pid) ?? 0));
  }
  return spent;
}
