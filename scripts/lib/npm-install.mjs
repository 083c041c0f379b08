// `npm ci` only when node_modules is missing or package-lock.json changed since the last install.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './run.mjs';
import { say } from './ui.mjs';

const MARKER = '.cubicle-install.json';

function lockHash(root) {
  return createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex');
}

/**
 * installReason says why dependencies must be (re)installed, or returns undefined when the
 * marker we keep inside node_modules matches the lock file. Without a marker, npm's own hidden
 * lock file being newer than package-lock.json counts as in sync (someone ran npm install).
 */
function installReason(root, hash) {
  const modules = join(root, 'node_modules');
  if (!existsSync(modules)) return 'node_modules is missing';
  const marker = join(modules, MARKER);
  if (existsSync(marker)) {
    const recorded = JSON.parse(readFileSync(marker, 'utf8'));
    return recorded.lockSha256 === hash ? undefined : 'package-lock.json changed';
  }
  const hidden = join(modules, '.package-lock.json');
  if (
    existsSync(hidden) &&
    statSync(hidden).mtimeMs >= statSync(join(root, 'package-lock.json')).mtimeMs
  ) {
    writeFileSync(
      marker,
      JSON.stringify({ lockSha256: hash, adoptedAt: new Date().toISOString() }),
    );
    return undefined;
  }
  return 'no record of the last install';
}

/** ensureNodeModules runs `npm ci` when needed and records the lock file's hash afterwards. */
export async function ensureNodeModules(root) {
  const hash = lockHash(root);
  const reason = installReason(root, hash);
  if (!reason) {
    say('node_modules matches package-lock.json');
    return;
  }
  say(`npm ci (${reason})`);
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root });
  writeFileSync(
    join(root, 'node_modules', MARKER),
    JSON.stringify({ lockSha256: hash, installedAt: new Date().toISOString() }),
  );
}
