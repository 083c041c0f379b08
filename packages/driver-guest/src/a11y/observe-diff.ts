import type { ElementRow, ObserveDiff } from '@cubicle/contract/guest';
import { type Fingerprint, sameFingerprint } from './fingerprint.js';
import type { Snapshot } from './snapshot-store.js';

/** Identity of one row to be: the live object and its identity evidence. */
export interface RowIdentity {
  ref: { bus: string; path: string };
  fingerprint: Fingerprint;
}

/**
 * carryTokens names the rows of a new snapshot: a row that is the same live object as a row of
 * the base, with the same identity (role, name, ancestors' roles and names), keeps the base's
 * token; every other row gets `<snapshotId>:<n>` by its position. Without a base every row gets
 * a new token. The same rule as resolving a token (resolve-token.ts): a token carried here would
 * have resolved to this element anyway, and one that would be refused is not carried.
 */
export function carryTokens(
  base: Snapshot | undefined,
  snapshotId: string,
  rows: readonly RowIdentity[],
): string[] {
  const old = new Map<string, { token: string; fingerprint: Fingerprint }>();
  for (const r of base?.rows ?? []) old.set(`${r.ref.bus}\n${r.ref.path}`, r);
  return rows.map((r, n) => {
    const was = old.get(`${r.ref.bus}\n${r.ref.path}`);
    return was && sameFingerprint(was.fingerprint, r.fingerprint)
      ? was.token
      : `${snapshotId}:${n}`;
  });
}

/**
 * rowDigest is what "changed" compares: the row without its screenshot frame (that follows the
 * screenshot asked for, not the element). Keys are written in the one order observe builds them.
 */
export function rowDigest(row: ElementRow): string {
  if (row.screenshot_frame === undefined) return JSON.stringify(row);
  const { screenshot_frame: _ignored, ...rest } = row;
  return JSON.stringify(rest);
}

/**
 * diffRows compares the rows of a new snapshot (tokens already carried) with its base's rows:
 * added (a token the base did not have), changed (same token, different digest), removed (a
 * base token no longer returned), and how many are unchanged.
 */
export function diffRows(
  since: string,
  base: readonly { token: string; row?: ElementRow }[],
  rows: readonly ElementRow[],
): ObserveDiff {
  const before = new Map(base.map((r) => [r.token, r.row]));
  const added: ElementRow[] = [];
  const changed: ElementRow[] = [];
  let unchanged = 0;
  const kept = new Set<string>();
  for (const row of rows) {
    kept.add(row.element_token);
    if (!before.has(row.element_token)) added.push(row);
    else {
      const was = before.get(row.element_token);
      if (was && rowDigest(was) === rowDigest(row)) unchanged += 1;
      else changed.push(row);
    }
  }
  const removed = base.map((r) => r.token).filter((t) => !kept.has(t));
  return { since, added, changed, removed, unchanged_count: unchanged };
}
