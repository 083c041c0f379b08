// The seccomp filter of every desktop sandbox: a classic BPF program (what bubblewrap's
// `--seccomp FD` loads with prctl(PR_SET_SECCOMP)), built here rather than with libseccomp so
// the list is reviewable TypeScript and the launcher needs no native code.

/** Architectures we build a filter for: Node's `process.arch` names. */
export type SeccompArch = 'x64' | 'arm64';

/** AUDIT_ARCH_* values (linux/audit.h) a syscall's seccomp_data.arch carries. */
export const AUDIT_ARCH: Record<SeccompArch, number> = { x64: 0xc000003e, arm64: 0xc00000b7 };

export const SECCOMP_RET = {
  KILL_PROCESS: 0x80000000,
  ERRNO: 0x00050000,
  ALLOW: 0x7fff0000,
} as const;
export const EPERM = 1;
export const ENOSYS = 38;

/** x86_64 syscalls with this bit are the x32 ABI, another table of numbers: refused whole. */
const X32_SYSCALL_BIT = 0x40000000;

/**
 * DENIED_SYSCALLS fail with EPERM: [name, x86_64 number, aarch64 (asm-generic) number or null
 * where the call does not exist]. The container runtimes' default profile (Docker, containerd)
 * denies these too (most need a capability the sandbox lacks anyway; denying them takes the
 * kernel code behind them out of reach): io_uring, the key store, BPF, perf, userfaultfd (the
 * usual starts of kernel exploits), every mount call, namespaces (setns; unshare/clone are
 * checked by flag below), modules, kexec, clock and host settings, handle-based opens
 * (open_by_handle_at walks out of any mount), NUMA policy, and obsolete calls. What stays
 * allowed on purpose: ALLOWED_ON_PURPOSE.
 */
export const DENIED_SYSCALLS: readonly (readonly [string, number, number | null])[] = [
  ['io_uring_setup', 425, 425],
  ['io_uring_enter', 426, 426],
  ['io_uring_register', 427, 427],
  ['keyctl', 250, 219],
  ['add_key', 248, 217],
  ['request_key', 249, 218],
  ['bpf', 321, 280],
  ['perf_event_open', 298, 241],
  ['userfaultfd', 323, 282],
  ['mount', 165, 40],
  ['umount2', 166, 39],
  ['pivot_root', 155, 41],
  ['move_mount', 429, 429],
  ['open_tree', 428, 428],
  ['fsopen', 430, 430],
  ['fsconfig', 431, 431],
  ['fsmount', 432, 432],
  ['fspick', 433, 433],
  ['mount_setattr', 442, 442],
  ['chroot', 161, 51],
  ['setns', 308, 268],
  ['kexec_load', 246, 104],
  ['kexec_file_load', 320, 294],
  ['init_module', 175, 105],
  ['finit_module', 313, 273],
  ['delete_module', 176, 106],
  ['create_module', 174, null],
  ['get_kernel_syms', 177, null],
  ['query_module', 178, null],
  ['acct', 163, 89],
  ['reboot', 169, 142],
  ['swapon', 167, 224],
  ['swapoff', 168, 225],
  ['syslog', 103, 116],
  ['vhangup', 153, 58],
  ['sethostname', 170, 161],
  ['setdomainname', 171, 162],
  ['clock_adjtime', 305, 266],
  ['clock_settime', 227, 112],
  ['settimeofday', 164, 170],
  ['lookup_dcookie', 212, 18],
  ['name_to_handle_at', 303, 264],
  ['open_by_handle_at', 304, 265],
  ['quotactl', 179, 60],
  ['quotactl_fd', 443, 443],
  ['nfsservctl', 180, 42],
  ['mbind', 237, 235],
  ['set_mempolicy', 238, 237],
  ['get_mempolicy', 239, 236],
  ['migrate_pages', 256, 238],
  ['move_pages', 279, 239],
  ['ioperm', 173, null],
  ['iopl', 172, null],
  ['uselib', 134, null],
  ['ustat', 136, null],
  ['sysfs', 139, null],
  ['_sysctl', 156, null],
];

/**
 * Kept on purpose (as in Docker's profile on kernels >= 4.8): ptrace, process_vm_readv/writev
 * and kcmp reach only processes of the same uid, and in a sandbox that is its own pid namespace
 * and its own host uid, i.e. the sandbox's own processes (debuggers and strace work).
 */
export const ALLOWED_ON_PURPOSE = ['ptrace', 'process_vm_readv', 'process_vm_writev', 'kcmp'];

/** Syscalls checked by argument, and clone3 (its flags sit in memory a filter cannot read). */
const CHECKED: Record<'clone' | 'unshare' | 'clone3' | 'personality', [number, number]> = {
  clone: [56, 220],
  unshare: [272, 97],
  clone3: [435, 435],
  personality: [135, 92],
};

/** The CLONE_NEW* flags (linux/sched.h). CLONE_NEWTIME shares its bit with clone's signal byte. */
export const CLONE_NEW = {
  NEWNS: 0x00020000,
  NEWCGROUP: 0x02000000,
  NEWUTS: 0x04000000,
  NEWIPC: 0x08000000,
  NEWUSER: 0x10000000,
  NEWPID: 0x20000000,
  NEWNET: 0x40000000,
  NEWTIME: 0x00000080,
} as const;
const CLONE_NS_MASK =
  CLONE_NEW.NEWNS |
  CLONE_NEW.NEWCGROUP |
  CLONE_NEW.NEWUTS |
  CLONE_NEW.NEWIPC |
  CLONE_NEW.NEWUSER |
  CLONE_NEW.NEWPID |
  CLONE_NEW.NEWNET;
const UNSHARE_NS_MASK = CLONE_NS_MASK | CLONE_NEW.NEWTIME;

/** personality() values Docker's profile allows: the default, the 32-bit ones, and the query. */
const PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/** Offsets in struct seccomp_data: nr, arch, then args[6] as u64 (low word first on LE). */
const DATA = { nr: 0, arch: 4, arg0Low: 16 };

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

type Target = string | null; // a label, or null: the next instruction
interface Insn {
  code: number;
  k: number;
  jt?: Target;
  jf?: Target;
  label?: string;
}

/** assemble lays out labelled instructions as struct sock_filter (8 bytes each, little-endian). */
function assemble(program: Insn[]): Buffer {
  const at = new Map<string, number>();
  program.forEach((insn, i) => insn.label && at.set(insn.label, i));
  const out = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    const offset = (target: Target | undefined) => {
      if (target == null) return 0;
      const to = at.get(target);
      if (to === undefined) throw new Error(`seccomp: no label ${target}`);
      const jump = to - (i + 1);
      if (jump < 0 || jump > 255) throw new Error(`seccomp: jump to ${target} out of range`);
      return jump;
    };
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(offset(insn.jt), i * 8 + 2);
    out.writeUInt8(offset(insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}

/**
 * seccompProgram builds the sandbox's filter for `arch`: a process of any other architecture is
 * killed (a 32-bit or x32 entry would otherwise reach syscalls by other numbers); the
 * DENIED_SYSCALLS fail with EPERM; clone and unshare fail with EPERM when asked for a new
 * namespace of any kind (threads and plain forks pass); clone3 fails with ENOSYS, so glibc falls
 * back to clone and its checked flags (what the container runtimes do); personality is limited
 * to PERSONALITIES; everything else is allowed. bubblewrap's `--disable-userns` closes user
 * namespaces a second way.
 */
export function seccompProgram(arch: SeccompArch): Buffer {
  const index = arch === 'x64' ? 0 : 1;
  const nr = (pair: readonly [number, number]) => pair[index];
  const program: Insn[] = [
    { code: LD_W_ABS, k: DATA.arch },
    { code: JEQ_K, k: AUDIT_ARCH[arch], jt: null, jf: 'kill' },
    { code: LD_W_ABS, k: DATA.nr },
  ];
  if (arch === 'x64') program.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: 'eperm', jf: null });
  for (const [, x64, arm64] of DENIED_SYSCALLS) {
    const number = arch === 'x64' ? x64 : arm64;
    if (number !== null) program.push({ code: JEQ_K, k: number, jt: 'eperm', jf: null });
  }
  program.push(
    { code: JEQ_K, k: nr(CHECKED.clone3), jt: 'enosys', jf: null },
    { code: JEQ_K, k: nr(CHECKED.clone), jt: 'clone', jf: null },
    { code: JEQ_K, k: nr(CHECKED.unshare), jt: 'unshare', jf: null },
    { code: JEQ_K, k: nr(CHECKED.personality), jt: 'personality', jf: 'allow' },
    { label: 'clone', code: LD_W_ABS, k: DATA.arg0Low },
    { code: JSET_K, k: CLONE_NS_MASK, jt: 'eperm', jf: 'allow' },
    { label: 'unshare', code: LD_W_ABS, k: DATA.arg0Low },
    { code: JSET_K, k: UNSHARE_NS_MASK, jt: 'eperm', jf: 'allow' },
    { label: 'personality', code: LD_W_ABS, k: DATA.arg0Low },
    ...PERSONALITIES.map((value) => ({ code: JEQ_K, k: value, jt: 'allow', jf: null })),
    { code: RET_K, k: SECCOMP_RET.ERRNO | EPERM, label: 'eperm' },
    { label: 'allow', code: RET_K, k: SECCOMP_RET.ALLOW },
    { label: 'enosys', code: RET_K, k: SECCOMP_RET.ERRNO | ENOSYS },
    { label: 'kill', code: RET_K, k: SECCOMP_RET.KILL_PROCESS },
  );
  // The personality list falls through to 'eperm' (the instruction right after it).
  return assemble(program);
}

/** seccompArch is this machine's architecture as the filter knows it, or null (no filter). */
export function seccompArch(arch: string = process.arch): SeccompArch | null {
  return arch === 'x64' || arch === 'arm64' ? arch : null;
}
