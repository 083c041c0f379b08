import { describe, expect, it } from 'vitest';
import { bwrapOptions, guestCodeMounts, SANDBOX_PATHS, sandboxEnv } from './sandbox-spec.js';

const pairs = (args: string[], flag: string) =>
  args.flatMap((arg, i) => (arg === flag ? [[args[i + 1], args[i + 2]]] : []));

describe('the desktop sandbox spec', () => {
  const code = guestCodeMounts();
  const args = bwrapOptions({
    socketDir: '/tmp/cubicle-desktop-x/sock',
    passwdFile: '/tmp/cubicle-desktop-x/passwd',
    groupFile: '/tmp/cubicle-desktop-x/group',
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
    const writable = pairs(args, '--bind');
    expect(writable).toEqual([['/tmp/cubicle-desktop-x/sock', SANDBOX_PATHS.sockets]]);
    for (const [, inside] of ro.filter(([host]) => host!.includes('node_modules')))
      expect(inside!.startsWith(SANDBOX_PATHS.code)).toBe(true);
    const packages = code.map((m) => m.sandbox).filter((p) => p.includes('/packages/'));
    expect(packages.sort()).toEqual(
      ['config', 'contract', 'driver-guest', 'http'].map(
        (name) => `${SANDBOX_PATHS.code}/packages/${name}`,
      ),
    );
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
