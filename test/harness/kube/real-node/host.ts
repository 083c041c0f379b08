// What a real node changes on this machine, and how it is put back: kubelet's sysctls, the cgroup
// root it runs Pods under, mounts left below the node's temp dir and processes (shims) started on
// the node's behalf. Every node records what it changed in a state file; a later node start
// undoes the changes of a node whose test process died (SIGKILL) before it could.
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cleanupKubeProxy, closeBridge, type NetfilterBefore } from './services.js';

const execFileP = promisify(execFile);

/** sh runs a command (no shell) and returns stdout; failures throw with stderr. */
export async function sh(command: string, args: string[], input?: string): Promise<string> {
  if (input === undefined) {
    const { stdout } = await execFileP(command, args, { maxBuffer: 64 << 20 });
    return stdout;
  }
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${command} ${args.join(' ')}: ${stderr || error.message}`))
        : resolve(stdout),
    );
    child.stdin?.end(input);
  });
}

/**
 * The sysctls kubelet sets itself at start (protectKernelDefaults: false), and the one kube-proxy
 * may set (route_localnet, for NodePorts on loopback; ours are on the bridge only).
 */
export const KUBELET_SYSCTLS = [
  'vm/overcommit_memory',
  'kernel/panic',
  'kernel/panic_on_oops',
  'net/ipv4/conf/all/route_localnet',
];

export function readSysctls(): Record<string, string> {
  return Object.fromEntries(
    KUBELET_SYSCTLS.map((key) => [key, readFileSync(`/proc/sys/${key}`, 'utf8').trim()]),
  );
}

export function restoreSysctls(values: Record<string, string>): void {
  for (const [key, value] of Object.entries(values)) {
    try {
      if (readFileSync(`/proc/sys/${key}`, 'utf8').trim() !== value)
        writeFileSync(`/proc/sys/${key}`, value);
    } catch {
      // Not writable here: nothing was changed either.
    }
  }
}

/** The hierarchies kubelet's cgroupfs driver uses: every v1 one (v1 / hybrid host), or the v2 root. */
function cgroupHierarchies(): string[] {
  const base = '/sys/fs/cgroup';
  // A pure cgroup v2 host has one hierarchy, mounted at the base itself.
  if (existsSync(join(base, 'cgroup.controllers'))) return [base];
  return readdirSync(base)
    .map((name) => join(base, name))
    .filter((path) => {
      try {
        return existsSync(join(path, 'cgroup.procs')) && !path.endsWith('/unified');
      } catch {
        return false;
      }
    });
}

/** makeCgroupRoot creates /<name> in every hierarchy (kubelet expects its cgroupRoot to exist). */
export function makeCgroupRoot(name: string): void {
  for (const hierarchy of cgroupHierarchies())
    mkdirSync(join(hierarchy, name), { recursive: true });
}

/** removeCgroupTree removes /<name> (deepest first) in every hierarchy; busy groups stay. */
export function removeCgroupTree(name: string): void {
  const remove = (path: string) => {
    if (!existsSync(path)) return;
    for (const entry of readdirSync(path, { withFileTypes: true }))
      if (entry.isDirectory()) remove(join(path, entry.name));
    try {
      rmdirSync(path);
    } catch {
      // Still has processes: the caller stops them first; a later start retries.
    }
  };
  for (const hierarchy of cgroupHierarchies()) remove(join(hierarchy, name));
}

/**
 * killCgroupTree SIGKILLs every process in /<name> of every hierarchy: the Pods' processes (pause,
 * the desktop) are the shims' children in their own PID namespaces and outlive a killed shim.
 */
export function killCgroupTree(name: string): void {
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    for (const entry of readdirSync(path, { withFileTypes: true }))
      if (entry.isDirectory()) visit(join(path, entry.name));
    let pids: string[] = [];
    try {
      pids = readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  };
  for (const hierarchy of cgroupHierarchies()) visit(join(hierarchy, name));
}

/** unmountUnder lazily unmounts every mount below `dir`, deepest first. */
export async function unmountUnder(dir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((path): path is string => !!path && (path === dir || path.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const path of mounts) await sh('umount', ['-l', path]).catch(() => undefined);
}

/** pidsMentioning lists processes whose command line contains `needle` (the node's own dir). */
export function pidsMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmdline.includes(needle) && Number(name) !== process.pid) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** The record of one node's host changes, under STATE_DIR/<pid>.json while it runs. */
export interface NodeRecord {
  pid: number;
  dir: string;
  bridge: string;
  cgroupRoot: string;
  sysctls: Record<string, string>;
  /** Hard-coded host paths kubelet/containerd create that did not exist before. */
  createdPaths: string[];
  /** kube-proxy's binary when the node runs Services (its rules and the guard rule are undone). */
  kubeProxy?: string;
  /** The host's netfilter state before kube-proxy ran (what its cleanup leaves is removed if new). */
  netfilter?: NetfilterBefore;
}

const STATE_DIR = '/run/cubicle-real-node';

export function recordNode(record: NodeRecord): void {
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(join(STATE_DIR, `${record.pid}.json`), JSON.stringify(record));
}

export function forgetNode(pid: number): void {
  rmSync(join(STATE_DIR, `${pid}.json`), { force: true });
  try {
    rmdirSync(STATE_DIR);
  } catch {
    // Another node still runs.
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readlinkSync(`/proc/${pid}/exe`).length > 0;
  } catch {
    return false;
  }
}

/**
 * undoHostChanges puts back what a node changed: kills what still runs from its dir, unmounts,
 * deletes its bridge, restores sysctls, removes its cgroups and the host paths it created.
 */
export async function undoHostChanges(
  record: NodeRecord,
  log: (line: string) => void = () => {},
): Promise<void> {
  const t0 = performance.now();
  const phase = (what: string) => log(`  ${what} at ${(performance.now() - t0).toFixed(0)} ms`);
  for (const pid of pidsMentioning(record.dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  killCgroupTree(record.cgroupRoot);
  phase('killed');
  await unmountUnder(record.dir);
  phase('unmounted');
  if (record.kubeProxy) {
    await cleanupKubeProxy(record.kubeProxy, record.netfilter);
    await closeBridge(record.bridge);
  }
  await sh('ip', ['link', 'delete', record.bridge]).catch(() => undefined);
  restoreSysctls(record.sysctls);
  // The killed processes leave their cgroups a moment later.
  for (let i = 0; i < 20; i += 1) {
    removeCgroupTree(record.cgroupRoot);
    if (!cgroupHierarchies().some((h) => existsSync(join(h, record.cgroupRoot)))) break;
    await sleep(100);
  }
  phase('bridge, sysctls, cgroups');
  for (const path of record.createdPaths) rmSync(path, { recursive: true, force: true });
  removeInBackground(record.dir);
  phase('removed');
}

/**
 * removeInBackground renames `dir` aside and deletes it with a detached, niced `rm -rf`: the
 * unpacked images are hundreds of MB of small files, and deleting them took 83 s on a loaded
 * machine. Nothing is mounted there any more (unmountUnder ran first).
 */
function removeInBackground(dir: string): void {
  if (!existsSync(dir)) return;
  const trash = `${dir}.deleting`;
  try {
    renameSync(dir, trash);
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return;
  }
  spawn('nice', ['-n', '10', 'rm', '-rf', trash], { detached: true, stdio: 'ignore' }).unref();
}

/** cleanStaleNodes undoes the changes of nodes whose test process is gone. */
export async function cleanStaleNodes(log: (line: string) => void): Promise<void> {
  if (!existsSync(STATE_DIR)) return;
  for (const file of readdirSync(STATE_DIR)) {
    const pid = Number(file.replace(/\.json$/, ''));
    if (!Number.isInteger(pid) || isAlive(pid)) continue;
    try {
      const record = JSON.parse(readFileSync(join(STATE_DIR, file), 'utf8')) as NodeRecord;
      log(`real node: undoing what the node of dead process ${pid} left (${record.bridge})`);
      await undoHostChanges(record);
    } finally {
      forgetNode(pid);
    }
  }
}

const SERVICES_LOCK = '/run/cubicle-real-node-services.lock';

/**
 * lockServices waits until no other live node runs Services, then takes the machine's one
 * Services slot: kube-proxy's KUBE-* chains are shared by every kube-proxy of a host, and its
 * cleanup removes all of them. A lock whose holder died is taken over.
 */
export async function lockServices(log: (line: string) => void, timeoutMs = 1_200_000) {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    try {
      writeFileSync(SERVICES_LOCK, String(process.pid), { flag: 'wx' });
      return;
    } catch {
      const holder = Number(readFileSync(SERVICES_LOCK, 'utf8').trim() || '0');
      // Ours (a start that failed before its stop() existed) or a dead process's: take it over.
      if (!holder || holder === process.pid || !isAlive(holder)) {
        rmSync(SERVICES_LOCK, { force: true });
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`another real node with Services (process ${holder}) still runs`);
      if (!said) log(`real node: waiting for the node of process ${holder} (Services) to stop`);
      said = true;
      await sleep(2000);
    }
  }
}

export function unlockServices(): void {
  try {
    if (Number(readFileSync(SERVICES_LOCK, 'utf8').trim()) === process.pid)
      rmSync(SERVICES_LOCK, { force: true });
  } catch {
    // Not held.
  }
}
