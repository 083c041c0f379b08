// Who the API and the dashboard run as. Started as root, `npm start` keeps root only for what
// must create sandboxes (the worker: bubblewrap, cgroups, a uid per sandbox) and runs the API
// and the web app as the system user `cubicle`, made on first use. A process the sandboxes can
// talk to (the API relays viewer streams and guest calls) then holds no root to lose.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The system account of the API and the dashboard. */
export const APP_USER = 'cubicle';

/** Files the unprivileged processes must read: reading them means every parent lets them through. */
const MUST_READ = [
  'package.json',
  'apps/api/dist/main.js',
  'apps/web/.next/BUILD_ID',
  'node_modules/next/dist/bin/next',
];

/** lookupUser reads `name` from the passwd database: `{ name, uid, gid, home }` or undefined. */
export function lookupUser(name) {
  const result = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  const [, , uid, gid, , home] = result.stdout.trim().split(':');
  return { name, uid: Number(uid), gid: Number(gid), home: home || '/nonexistent' };
}

function ensureSystemUser(name, log) {
  const found = lookupUser(name);
  if (found) return found;
  const args = ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent'];
  args.push('--shell', '/usr/sbin/nologin', '--comment', 'Cubicle API and dashboard', name);
  const made = spawnSync('useradd', args, { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`useradd ${name} failed: ${made.stderr.trim()}`);
  const user = lookupUser(name);
  if (!user) throw new Error(`useradd ${name} succeeded but getent does not find the user`);
  log(`created system user ${name} (uid ${user.uid}) for the API and the dashboard`);
  return user;
}

/** canRead reports whether `user` may read `file` (every parent directory included). */
export function canRead(file, user) {
  const result = spawnSync('test', ['-r', file], { uid: user.uid, gid: user.gid, cwd: '/' });
  return result.status === 0;
}

/**
 * appUser returns the account the API and the web app run as: undefined when we are not root
 * (they run as ourselves, as everything else does). As root: the `cubicle` system user, unless
 * it cannot read the checkout (a clone under /root, mode 0700): then they stay root and `warn`
 * says why and what fixes it.
 */
export function appUser(root, { log, warn }) {
  if (process.getuid?.() !== 0) return undefined;
  const user = ensureSystemUser(APP_USER, log);
  const unreadable = MUST_READ.map((file) => join(root, file)).filter((f) => !canRead(f, user));
  if (unreadable.length > 0) {
    warn(
      `the API and the dashboard run as root: user ${user.name} cannot read ${unreadable[0]} ` +
        '(a parent directory is closed to others). Clone Cubicle where others may enter ' +
        '(chmod o+x on each parent) to run them unprivileged.',
    );
    return undefined;
  }
  return user;
}
