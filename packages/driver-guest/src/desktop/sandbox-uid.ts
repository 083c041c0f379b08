import { createHash } from 'node:crypto';
import { readlinkSync, unlinkSync } from 'node:fs';
import { mkdir, readlink, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Host uids for sandboxes when the launcher runs as root: 65,536 ids from 200,000,000, far
 * above any login or subordinate (subuid) range. Each live sandbox holds one alone, so even a
 * process that escaped its namespaces could not signal or read another sandbox's processes.
 */
export const SANDBOX_UID_BASE = 200_000_000;
export const SANDBOX_UID_COUNT = 65_536;

const claimsDir = () => join(tmpdir(), 'cubicle-sandbox-uids');

/**
 * claimSandboxUid reserves a host uid for session `id`: a symlink `<uid>` → `<id>` created
 * atomically in a root-only directory (whoever creates it first owns the uid). The search starts
 * at a hash of the id. A claim left by a crash is skipped, never taken over (two launchers could
 * both decide it is stale); the session's stop releases it.
 */
export async function claimSandboxUid(id: string): Promise<number> {
  await mkdir(claimsDir(), { recursive: true, mode: 0o700 });
  const start = createHash('sha256').update(id).digest().readUInt32BE(0) % SANDBOX_UID_COUNT;
  for (let i = 0; i < SANDBOX_UID_COUNT; i += 1) {
    const uid = SANDBOX_UID_BASE + ((start + i) % SANDBOX_UID_COUNT);
    const claim = join(claimsDir(), String(uid));
    try {
      await symlink(id, claim);
      return uid;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Our own earlier claim (a provisioning re-run after a crash) is ours again.
      if ((await readlink(claim).catch(() => null)) === id) return uid;
    }
  }
  throw new Error('no free sandbox uid');
}

/** releaseSandboxUid drops `id`'s claim on `uid` (only if it still is `id`'s). */
export async function releaseSandboxUid(id: string, uid: number): Promise<void> {
  const claim = join(claimsDir(), String(uid));
  if ((await readlink(claim).catch(() => null)) === id) await unlink(claim).catch(() => undefined);
}

/** releaseSandboxUidSync is releaseSandboxUid for process exit hooks (no event loop left). */
export function releaseSandboxUidSync(id: string, uid: number): void {
  const claim = join(claimsDir(), String(uid));
  try {
    if (readlinkSync(claim) === id) unlinkSync(claim);
  } catch {
    /* not ours, or gone */
  }
}
