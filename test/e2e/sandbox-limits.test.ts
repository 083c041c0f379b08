/* eslint-disable @typescript-eslint/no-explicit-any -- guest answers are read loosely here; the daemon validates them against the contract. */
// Issue 30 §2, §3 and §6 on real sandboxed desktops (the local backend's kind, started through
// startDesktop as the backend does): the sandbox's cgroup holds its memory, CPU and tasks, an
// OOM kill stays inside and is reported, its stdio is kept only up to a cap, its kernel surface
// is filtered, the host's paths are not in its mount table, and a checkout in a 0700 directory
// still starts desktops.
import { execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  sandboxOutputTail,
  sandboxResourceEvents,
  sessionDir,
  startDesktop,
  type DesktopSession,
} from '@cubicle/driver-guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MiB = 1024 * 1024;

/** guest calls the sandbox's daemon over its unix socket, as the worker does. */
function guest(session: DesktopSession, path: string, body: unknown): Promise<any> {
  const socketPath = decodeURIComponent(session.guestUrl!.slice('http+unix://'.length));
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: `/v1${path}`,
        method: 'POST',
        headers: {
          authorization: `Bearer ${session.guestToken}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode, ...JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const sh = (session: DesktopSession, command: string, timeoutMs = 60_000) =>
  guest(session, '/shell/run', { command, timeout_ms: timeoutMs });

/** cgroupDir is the sandbox's directory in one v1 hierarchy, read from its PID 1. */
function cgroupDir(session: DesktopSession, controller: string): string {
  const line = readFileSync(`/proc/${session.sandbox!.initPid}/cgroup`, 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]!.split(',').includes(controller))!;
  return join('/sys/fs/cgroup', controller, line.split(':')[2]!);
}
const readNumber = (file: string) => Number(readFileSync(file, 'utf8').trim());

// Calls that start most kernel escapes, each made with arguments that succeed on an unfiltered
// sandbox here (measured: unshare, io_uring_setup, add_key, keyctl and userfaultfd did).
const SYSCALL_PROBE = String.raw`
import ctypes, json, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(*args):
    ctypes.set_errno(0)
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return 'ok' if r >= 0 else os.strerror(ctypes.get_errno())
params = ctypes.create_string_buffer(120)
attr = ctypes.create_string_buffer(128)
struct.pack_into('IIQ', attr, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, cpu clock
print(json.dumps({
    'unshare(CLONE_NEWUSER)': call(272, 0x10000000),
    'io_uring_setup': call(425, 4, params),
    'add_key': call(248, b'user', b'probe', b'x', 1, -4),
    'keyctl': call(250, 0, -4, 0),
    'bpf': call(321, 0, 0, 0),
    'perf_event_open': call(298, attr, 0, -1, -1, 0),
    'userfaultfd': call(323, 1),
    'mount': call(165, b'none', b'/tmp', b'tmpfs', 0, 0),
}))
`;

describe.skipIf(process.arch !== 'x64' || process.getuid?.() !== 0)(
  'a local sandbox is held to its limits',
  () => {
    let session: DesktopSession;
    const limits = { cpuMillis: 250, memoryMb: 384 };

    beforeAll(async () => {
      session = await startDesktop({ daemon: 'sandbox', limits });
    });
    afterAll(async () => {
      await session?.stop();
    });

    it("runs in a cgroup of its own with the pool's cpu, memory and a task limit", () => {
      expect(readNumber(join(cgroupDir(session, 'memory'), 'memory.limit_in_bytes'))).toBe(
        384 * MiB,
      );
      expect(readNumber(join(cgroupDir(session, 'cpu'), 'cpu.cfs_quota_us'))).toBe(25_000);
      expect(readNumber(join(cgroupDir(session, 'cpu'), 'cpu.cfs_period_us'))).toBe(100_000);
      expect(readNumber(join(cgroupDir(session, 'pids'), 'pids.max'))).toBe(4096);
      expect(cgroupDir(session, 'memory')).toContain(`/cubicle/${session.id}`);
    });

    it('an allocation past the memory limit is killed inside it, reported, and the desktop lives', async () => {
      const before = await sandboxResourceEvents(session.id);
      expect(before?.oomKills).toBe(0);
      const hog = await sh(session, `python3 -c "b = b'x' * (${limits.memoryMb * 2} << 20)"`);
      expect(hog.exit_code).not.toBe(0);
      const after = await sandboxResourceEvents(session.id);
      expect(after!.oomKills).toBeGreaterThanOrEqual(1);
      // The desktop (daemon, X server) still answers; the host's processes were never candidates.
      expect((await sh(session, 'echo alive')).stdout).toBe('alive\n');
      expect(process.memoryUsage().rss).toBeGreaterThan(0);
    });

    it('tmpfs writes are charged to the sandbox, each tmpfs capped below the limit', async () => {
      const usage = () => readNumber(join(cgroupDir(session, 'memory'), 'memory.usage_in_bytes'));
      const base = usage();
      await sh(session, 'head -c 100M /dev/zero > /tmp/fill');
      expect(usage() - base).toBeGreaterThan(90 * MiB);
      await sh(session, 'rm -f /tmp/fill');
      const df = await sh(session, 'df -m /tmp /home/sandbox /dev/shm | tail -3');
      const sizes = (df.stdout as string)
        .trim()
        .split('\n')
        .map((l) => Number(l.split(/\s+/)[1]));
      expect(sizes).toEqual([limits.memoryMb / 2, limits.memoryMb / 2, limits.memoryMb / 8]);
    });

    it('a busy loop gets at most its CPU quota (CPU time over wall time)', async () => {
      const usage = join(cgroupDir(session, 'cpuacct'), 'cpuacct.usage');
      const cpuBefore = readNumber(usage);
      const wallBefore = process.hrtime.bigint();
      // Two loops: unthrottled they would take both cores of this machine.
      await sh(
        session,
        `timeout 4 sh -c 'while :; do :; done' & timeout 4 sh -c 'while :; do :; done'; wait`,
      );
      const wallNs = Number(process.hrtime.bigint() - wallBefore);
      const share = (readNumber(usage) - cpuBefore) / wallNs;
      expect(share).toBeLessThan((limits.cpuMillis / 1000) * 1.15);
      expect(share).toBeGreaterThan((limits.cpuMillis / 1000) * 0.5);
    });

    it('keeps at most 64 KiB of what the sandbox writes to its stdio, and no file of it', async () => {
      // The holder takes the daemon's stdout (PID 2, the same user: pidfd_getfd, as a debugger
      // could) and writes 1 MiB and a last line into it.
      const flood = await sh(
        session,
        `python3 -c "
import ctypes, os, select
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(438, libc.syscall(434, 2, 0), 1, 0)
assert fd >= 0, os.strerror(ctypes.get_errno())
def put(data):
    while data:
        select.select([], [fd], [])
        try: data = data[os.write(fd, data):]
        except BlockingIOError: pass
for _ in range(1024): put(b'y' * 1023 + b'\\n')
put(b'END-OF-FLOOD\\n')"`,
      );
      expect(flood.exit_code, flood.stderr).toBe(0);
      const deadline = Date.now() + 10_000;
      while (!sandboxOutputTail(session.id)?.text.includes('END-OF-FLOOD') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const tail = sandboxOutputTail(session.id)!;
      expect(tail.text).toContain('END-OF-FLOOD');
      expect(tail.storedBytes).toBeLessThanOrEqual(64 * 1024);
      // Nothing of it on the host's disk: the session directory holds only small files.
      const dir = sessionDir(session.id);
      const sizes = readdirSync(dir).map((name) => statSync(join(dir, name)).size);
      expect(Math.max(...sizes)).toBeLessThan(16 * 1024);
    });

    it('refuses the calls kernel escapes start from with EPERM', async () => {
      const probe = await guest(session, '/shell/run', {
        argv: ['/usr/bin/python3', '-c', SYSCALL_PROBE],
        timeout_ms: 30_000,
      });
      const results = JSON.parse(probe.stdout) as Record<string, string>;
      for (const [call, result] of Object.entries(results))
        expect(result, call).toBe('Operation not permitted');
    });

    // Its host uid is not hidden: /proc/self/uid_map shows it, and the kernel prints a tmpfs
    // owner as the initial namespace numbers it. It names no file and grants nothing.
    it('shows no host path in its mount table', async () => {
      const mountinfo = (await sh(session, 'cat /proc/self/mountinfo')).stdout as string;
      expect(mountinfo).toContain('/opt/cubicle');
      for (const hostPath of [
        REPO_ROOT.replace(/\/$/, ''),
        '.cubicle',
        sessionDir(session.id),
        'cubicle-desktop-',
      ])
        expect(mountinfo, hostPath).not.toContain(hostPath);
    });

    it('still runs Chromium (with its own sandbox off: ours is the boundary)', async () => {
      const launched = await guest(session, '/windows/launch', {
        app: 'browser',
        wait_for_window_ms: 60_000,
      });
      expect(launched.window_wait).toBe('found');
    });
  },
);

/**
 * A checkout in a directory the sandbox's uid cannot traverse (mktemp -d is 0700): a clone of
 * this one (hard links, same build) starts a sandboxed desktop from there, in its own process.
 */
describe.skipIf(process.getuid?.() !== 0)('a checkout in a 0700 directory', () => {
  let parent: string;
  beforeAll(() => {
    parent = mkdtempSync(join(tmpdir(), 'cubicle-clone-'));
    expect(statSync(parent).mode & 0o777).toBe(0o700);
    const clone = join(parent, 'checkout');
    mkdirSync(join(clone, 'packages'), { recursive: true });
    execFileSync('cp', ['-al', join(REPO_ROOT, 'node_modules'), clone]);
    for (const pkg of readdirSync(join(REPO_ROOT, 'packages')))
      cpSync(join(REPO_ROOT, 'packages', pkg), join(clone, 'packages', pkg), {
        recursive: true,
        filter: (src) => !src.includes(`${pkg}/node_modules`),
      });
  });
  afterAll(() => rmSync(parent, { recursive: true, force: true }));

  it('starts desktops, and its path is not in their mount table', async () => {
    const clone = join(parent, 'checkout');
    const script = `
      const { startDesktop } = await import(${JSON.stringify(join(clone, 'packages/driver-guest/dist/index.js'))});
      const session = await startDesktop({ daemon: 'sandbox' });
      const { readFileSync } = await import('node:fs');
      console.log(JSON.stringify({ mountinfo: readFileSync('/proc/' + session.pids.daemon + '/mountinfo', 'utf8') }));
      await session.stop();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(0);
    const { mountinfo } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { mountinfo: string };
    expect(mountinfo).toContain('/opt/cubicle');
    expect(mountinfo).not.toContain(parent);
  });
});
