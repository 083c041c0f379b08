import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AUDIT_ARCH,
  CLONE_NEW,
  DENIED_SYSCALLS,
  ENOSYS,
  EPERM,
  SECCOMP_RET,
  seccompProgram,
  type SeccompArch,
} from './seccomp-filter.js';

/**
 * run interprets the classic BPF subset the builder emits (ld abs, jeq/jge/jset, ret) against
 * one seccomp_data, as the kernel would: the program's meaning is tested, not its bytes.
 */
function run(program: Buffer, data: { nr: number; arch: number; arg0?: number }): number {
  const field = (offset: number) => {
    if (offset === 0) return data.nr >>> 0;
    if (offset === 4) return data.arch >>> 0;
    if (offset === 16) return (data.arg0 ?? 0) >>> 0;
    throw new Error(`unexpected load at ${offset}`);
  };
  let acc = 0;
  for (let pc = 0; pc * 8 < program.length; pc += 1) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) acc = field(k);
    else if (code === 0x06) return k;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected opcode ${code}`);
  }
  throw new Error('fell off the end of the program');
}

const NR = {
  x64: { clone: 56, unshare: 272, clone3: 435, personality: 135, read: 0, ptrace: 101 },
  arm64: { clone: 220, unshare: 97, clone3: 435, personality: 92, read: 63, ptrace: 117 },
} as const;

describe.each(['x64', 'arm64'] as SeccompArch[])('the sandbox seccomp filter (%s)', (arch) => {
  const program = seccompProgram(arch);
  const call = (nr: number, arg0?: number) =>
    run(program, { nr, arch: AUDIT_ARCH[arch], ...(arg0 === undefined ? {} : { arg0 }) });
  const n = NR[arch];

  it('kills a process of another architecture', () => {
    const other = arch === 'x64' ? AUDIT_ARCH.arm64 : AUDIT_ARCH.x64;
    expect(run(program, { nr: n.read, arch: other })).toBe(SECCOMP_RET.KILL_PROCESS);
    expect(run(program, { nr: n.read, arch: 0x40000003 /* i386 */ })).toBe(
      SECCOMP_RET.KILL_PROCESS,
    );
  });

  it('denies every listed call with EPERM and allows ordinary ones', () => {
    for (const [name, x64, arm64] of DENIED_SYSCALLS) {
      const nr = arch === 'x64' ? x64 : arm64;
      if (nr !== null) expect(call(nr), name).toBe(SECCOMP_RET.ERRNO | EPERM);
    }
    expect(call(n.read)).toBe(SECCOMP_RET.ALLOW);
    expect(call(n.ptrace)).toBe(SECCOMP_RET.ALLOW);
  });

  it('refuses new namespaces through clone and unshare, not threads or forks', () => {
    const SIGCHLD = 17;
    const THREAD = 0x3d0f00; // glibc's pthread_create flags
    expect(call(n.clone, SIGCHLD)).toBe(SECCOMP_RET.ALLOW);
    expect(call(n.clone, THREAD)).toBe(SECCOMP_RET.ALLOW);
    for (const [name, flag] of Object.entries(CLONE_NEW)) {
      expect(call(n.unshare, flag), `unshare ${name}`).toBe(SECCOMP_RET.ERRNO | EPERM);
      // CLONE_NEWTIME's bit is clone's exit-signal byte there (clone cannot ask for it).
      if (name !== 'NEWTIME')
        expect(call(n.clone, flag | SIGCHLD), `clone ${name}`).toBe(SECCOMP_RET.ERRNO | EPERM);
    }
    expect(call(n.unshare, 0x400 /* CLONE_FILES */)).toBe(SECCOMP_RET.ALLOW);
  });

  it('sends clone3 to ENOSYS so libc falls back to the checked clone', () => {
    expect(call(n.clone3)).toBe(SECCOMP_RET.ERRNO | ENOSYS);
  });

  it('allows only the usual personalities', () => {
    expect(call(n.personality, 0)).toBe(SECCOMP_RET.ALLOW);
    expect(call(n.personality, 0xffffffff)).toBe(SECCOMP_RET.ALLOW);
    expect(call(n.personality, 0x0040000 /* ADDR_NO_RANDOMIZE */)).toBe(SECCOMP_RET.ERRNO | EPERM);
  });
});

describe('the seccomp filter on x86_64', () => {
  it('refuses the x32 ABI (other syscall numbers)', () => {
    const program = seccompProgram('x64');
    expect(run(program, { nr: 0x40000000 | 425, arch: AUDIT_ARCH.x64 })).toBe(
      SECCOMP_RET.ERRNO | EPERM,
    );
  });

  // The numbers are the kernel's: checked against this machine's headers where installed.
  it.each([
    ['x64', '/usr/include/x86_64-linux-gnu/asm/unistd_64.h', /#define __NR_(\w+)\s+(\d+)/g],
    ['arm64', '/usr/include/asm-generic/unistd.h', /#define __NR(?:3264)?_(\w+)\s+(\d+)/g],
  ] as const)('uses the kernel headers numbers (%s)', (arch, header, pattern) => {
    if (!existsSync(header)) return;
    const numbers = new Map(
      [...readFileSync(header, 'utf8').matchAll(pattern)].map((m) => [m[1]!, Number(m[2])]),
    );
    for (const [name, x64, arm64] of DENIED_SYSCALLS) {
      const ours = arch === 'x64' ? x64 : arm64;
      expect(ours, name).toBe(numbers.get(name) ?? null);
    }
  });
});
