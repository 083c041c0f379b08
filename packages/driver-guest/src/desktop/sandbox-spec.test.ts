import { describe, expect, it } from 'vitest';
import { HOST_STAGE_DIR } from '../archive/staging.js';
import { bwrapOptions, SANDBOX_PATHS, sandboxEnv, tmpfsBytes } from './sandbox-spec.js';

const pairs = (args: string[], flag: string) =>
  args.flatMap((arg, i) => (arg === flag ? [[args[i + 1], args[i + 2]]] : []));

describe('the desktop sandbox spec', () => {
  const code = [{ host: '/var/cache/cubicle/guest-code/0123abcd', sandbox: SANDBOX_PATHS.code }];
  const args = bwrapOptions({
    passwdFd: 10,
    groupFd: 11,
    seccompFd: 12,
    code,
    env: sandboxEnv({ DATABASE_URL: 'postgres://secret', LANG: 'de_DE.UTF-8', PATH: '/root/bin' }),
    infoFd: 6,
  });

  it('unshares every namespace, clears the environment and outlives its parent', () => {
    expect(args).toContain('--unshare-all');
    expect(args).not.toContain('--share-net');
    expect(args).toContain('--clearenv');
    expect(args).toContain('--new-session');
    // Desktops are adopted after a worker restart: never tied to the launcher's life.
    expect(args).not.toContain('--die-with-parent');
    expect(args.slice(args.indexOf('--uid'), args.indexOf('--uid') + 2)).toEqual(['--uid', '1000']);
  });

  it('keeps the egress link namespace the launcher joined, with the egress resolver', () => {
    const linked = bwrapOptions({
      passwdFd: 10,
      groupFd: 11,
      seccompFd: 12,
      code,
      env: {},
      infoFd: 6,
      resolvConfFd: 13,
      caBundleFd: 14,
    });
    // --share-net after --unshare-all keeps the namespace; the user namespace stays new.
    expect(linked.indexOf('--share-net')).toBeGreaterThan(linked.indexOf('--unshare-all'));
    expect(linked).toContain('--unshare-user');
    expect(pairs(linked, '--ro-bind-data')).toContainEqual(['13', '/etc/resolv.conf']);
    // The trust store with the egress CA (credentials injected at egress).
    expect(pairs(linked, '--ro-bind-data')).toContainEqual([
      '14',
      '/etc/ssl/certs/ca-certificates.crt',
    ]);
  });

  it("binds the host's chunk stage read-only where the guest archive looks for it", () => {
    expect(pairs(args, '--ro-bind').map(([, to]) => to)).not.toContain(HOST_STAGE_DIR);
    const staged = bwrapOptions({
      passwdFd: 10,
      groupFd: 11,
      seccompFd: 12,
      code,
      env: {},
      infoFd: 6,
      hostStage: '/tmp/cubicle-desktop-x/stage',
    });
    expect(pairs(staged, '--ro-bind')).toContainEqual([
      '/tmp/cubicle-desktop-x/stage',
      HOST_STAGE_DIR,
    ]);
    expect(pairs(staged, '--bind').map(([, to]) => to)).not.toContain(HOST_STAGE_DIR);
  });

  it('sets only allow-listed variables', () => {
    const env = Object.fromEntries(pairs(args, '--setenv'));
    expect(env).toEqual({
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: SANDBOX_PATHS.home,
      USER: 'sandbox',
      LOGNAME: 'sandbox',
      SHELL: '/bin/sh',
      TMPDIR: '/tmp',
      LANG: 'de_DE.UTF-8',
    });
  });

  it('mounts the system read-only and only the guest code of the checkout', () => {
    const ro = pairs(args, '--ro-bind');
    expect(ro).toContainEqual(['/usr', '/usr']);
    expect(ro).toContainEqual(['/etc', '/etc']);
    expect(ro).toContainEqual(['/dev/null', '/etc/shadow']);
    // Nothing of the host is writable inside: the guest and VNC sockets come in as listening
    // descriptors, so the sandbox can never replace what the control plane connects to.
    expect(pairs(args, '--bind')).toEqual([]);
    // The staged guest code (stage-guest-code.ts), never a path of the checkout.
    expect(ro).toContainEqual([code[0]!.host, SANDBOX_PATHS.code]);
    // passwd and group are data from descriptors: no session-dir path in the mount table.
    expect(pairs(args, '--ro-bind-data')).toEqual([
      ['10', '/etc/passwd'],
      ['11', '/etc/group'],
    ]);
    expect(args.join(' ')).not.toContain('cubicle-desktop-');
  });

  it('forbids nested user namespaces and applies the seccomp program', () => {
    expect(args).toContain('--unshare-user');
    expect(args).toContain('--disable-userns');
    expect(args.slice(args.indexOf('--seccomp'), args.indexOf('--seccomp') + 2)).toEqual([
      '--seccomp',
      '12',
    ]);
  });

  it('caps each tmpfs relative to the memory limit', () => {
    const MiB = 1024 * 1024;
    expect(tmpfsBytes(512)).toEqual({
      tmp: 256 * MiB,
      home: 256 * MiB,
      shm: 64 * MiB,
      secrets: 16 * MiB,
    });
    expect(tmpfsBytes(8192).tmp).toBe(1024 * MiB);
  });

  it('gives private, size-limited tmpfs for /tmp, home and a 0700 secrets directory', () => {
    const tmpfs = args.flatMap((arg, i) =>
      arg === '--tmpfs' ? [{ path: args[i + 1], size: args[i - 1], perms: args[i - 3] }] : [],
    );
    expect(tmpfs.map((t) => t.path)).toEqual([
      '/tmp',
      '/dev/shm',
      '/var/tmp',
      SANDBOX_PATHS.home,
      SANDBOX_PATHS.secrets,
    ]);
    const secrets = tmpfs.find((t) => t.path === SANDBOX_PATHS.secrets)!;
    expect(secrets.perms).toBe('0700');
    expect(Number(secrets.size)).toBe(16 * 1024 * 1024);
  });
});
