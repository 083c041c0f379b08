import type { ElementRow } from '@cubicle/contract/guest';
import type { AtspiRef } from './atspi-bus.js';
import type { Fingerprint } from './fingerprint.js';

/** TokenBinding ties one row of a snapshot to the exact live object and its identity evidence. */
export interface TokenBinding {
  ref: AtspiRef;
  fingerprint: Fingerprint;
}

/** SnapshotRow is one row as it was returned: its token, its binding and the row itself. */
export interface SnapshotRow extends TokenBinding {
  token: string;
  /** The row as sent (kept for a later diff); absent for rows of an unreadable window. */
  row?: ElementRow;
}

/**
 * Snapshot is one observe of one window: its rows in window order. A diff's snapshot also holds
 * the rows it carried over from its base under their old tokens, and answers for the base's id
 * (and the base's own aliases), so those tokens keep resolving.
 */
export class Snapshot {
  readonly rows: SnapshotRow[] = [];
  private readonly byToken = new Map<string, SnapshotRow>();
  private byPath: Map<string, string> | null = null;

  constructor(
    readonly id: string,
    readonly windowId: number,
    /** Path of the window's frame accessible, to scope "ambiguous" searches to that window. */
    readonly framePath: string,
    /** Ids of earlier snapshots whose surviving tokens this one carries (diffs). */
    readonly aliases: string[] = [],
  ) {}

  add(row: SnapshotRow): void {
    this.rows.push(row);
    this.byToken.set(row.token, row);
    this.byPath = null;
  }

  row(token: string): SnapshotRow | undefined {
    return this.byToken.get(token);
  }

  /** tokenOf names the row of an object (on the app's bus), to cite it in evidence. */
  tokenOf(bus: string, path: string): string | undefined {
    this.byPath ??= new Map(this.rows.map((r) => [`${r.ref.bus}\n${r.ref.path}`, r.token]));
    return this.byPath.get(`${bus}\n${path}`);
  }
}

export type Resolved =
  | { kind: 'ok'; snapshot: Snapshot; binding: TokenBinding }
  | { kind: 'unknown_snapshot' | 'invalidated' | 'unknown_row' | 'removed' };

/** BaseCheck says whether a snapshot can be the base of a diff of a window. */
export type BaseCheck =
  { kind: 'ok'; snapshot: Snapshot } | { kind: 'unknown' | 'replaced' | 'other_window' };

const MAX_SNAPSHOTS = 256;

/**
 * SnapshotStore issues snapshot ids and keeps only the latest snapshot of each window: a new
 * observe invalidates the older ones, so a token can only point into what the agent last saw.
 * A diff observe is the exception that keeps this rule: its snapshot becomes the latest and
 * carries the base's surviving rows under their old tokens, so what the agent saw last is the
 * base plus the diff. Ids are never reused within the process, so an invalidated id is
 * recognised as such.
 */
export class SnapshotStore {
  private counter = 0;
  private readonly latestByWindow = new Map<number, Snapshot>();
  private readonly byId = new Map<string, Snapshot>();
  private readonly invalidated = new Set<string>();

  /**
   * create records a snapshot and returns the ids of the window's snapshots it invalidated.
   * With `base` (the window's latest, checked by `checkBase`) it is a diff: nothing is
   * invalidated as a whole, and the base's ids answer for the new snapshot.
   */
  create(
    windowId: number,
    framePath: string,
    base?: Snapshot,
  ): { snapshot: Snapshot; invalidated: string[] } {
    this.counter += 1;
    const id = `s${this.counter.toString(36).padStart(6, '0')}`;
    const previous = this.latestByWindow.get(windowId);
    const invalidated: string[] = [];
    let snapshot: Snapshot;
    if (base && base === previous) {
      snapshot = new Snapshot(id, windowId, framePath, [base.id, ...base.aliases]);
      for (const alias of snapshot.aliases) this.byId.set(alias, snapshot);
    } else {
      snapshot = new Snapshot(id, windowId, framePath);
      if (previous) {
        for (const old of [previous.id, ...previous.aliases]) {
          this.byId.delete(old);
          this.invalidated.add(old);
          invalidated.push(old);
        }
      }
    }
    this.latestByWindow.set(windowId, snapshot);
    this.byId.set(id, snapshot);
    if (this.invalidated.size > 4 * MAX_SNAPSHOTS) this.invalidated.clear();
    return { snapshot, invalidated };
  }

  /**
   * finish drops the aliases a diff's snapshot carries no row of (every row of that id was
   * removed or re-issued), so a long run of diffs does not keep a chain of dead ids alive.
   */
  finish(snapshot: Snapshot): void {
    if (snapshot.aliases.length === 0) return;
    const carried = new Set(snapshot.rows.map((r) => r.token.slice(0, r.token.lastIndexOf(':'))));
    for (const alias of snapshot.aliases.filter((a) => !carried.has(a))) {
      snapshot.aliases.splice(snapshot.aliases.indexOf(alias), 1);
      this.byId.delete(alias);
      this.invalidated.add(alias);
    }
  }

  /** checkBase says whether `since` is the window's latest snapshot, the only diffable one. */
  checkBase(windowId: number, since: string): BaseCheck {
    const latest = this.latestByWindow.get(windowId);
    if (latest?.id === since) return { kind: 'ok', snapshot: latest };
    const owner = this.byId.get(since);
    if (owner && owner.windowId !== windowId) return { kind: 'other_window' };
    if (owner || this.invalidated.has(since)) return { kind: 'replaced' };
    return { kind: 'unknown' };
  }

  /** tokenFor formats the token of row n of a snapshot. */
  static tokenFor(snapshotId: string, n: number): string {
    return `${snapshotId}:${n}`;
  }

  resolve(token: string): Resolved {
    const sep = token.lastIndexOf(':');
    const id = token.slice(0, sep);
    const snapshot = this.byId.get(id);
    if (!snapshot) return { kind: this.invalidated.has(id) ? 'invalidated' : 'unknown_snapshot' };
    const row = snapshot.row(token);
    // A token of a base that a later diff did not carry: that diff listed it as removed.
    if (!row) return { kind: snapshot.id === id ? 'unknown_row' : 'removed' };
    return { kind: 'ok', snapshot, binding: row };
  }

  latest(windowId: number): Snapshot | undefined {
    return this.latestByWindow.get(windowId);
  }

  forgetWindow(windowId: number): void {
    const s = this.latestByWindow.get(windowId);
    if (!s) return;
    this.latestByWindow.delete(windowId);
    for (const id of [s.id, ...s.aliases]) {
      this.byId.delete(id);
      this.invalidated.add(id);
    }
  }
}
