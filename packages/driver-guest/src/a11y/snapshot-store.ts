import type { AtspiRef } from './atspi-bus.js';
import type { Fingerprint } from './fingerprint.js';

/** TokenBinding ties one row of a snapshot to the exact live object and its identity evidence. */
export interface TokenBinding {
  ref: AtspiRef;
  fingerprint: Fingerprint;
}

export interface Snapshot {
  id: string;
  windowId: number;
  /** Path of the window's frame accessible, to scope "ambiguous" searches to that window. */
  framePath: string;
  tokens: TokenBinding[];
}

export type Resolved =
  | { kind: 'ok'; snapshot: Snapshot; binding: TokenBinding }
  | { kind: 'unknown_snapshot' | 'invalidated' | 'unknown_row' };

const MAX_SNAPSHOTS = 256;

/**
 * SnapshotStore issues snapshot ids and keeps only the latest snapshot of each window: a new
 * observe invalidates the older ones, so a token can only point into what the agent last saw.
 * Ids are never reused within the process, so an invalidated id is recognised as such.
 */
export class SnapshotStore {
  private counter = 0;
  private readonly latestByWindow = new Map<number, Snapshot>();
  private readonly byId = new Map<string, Snapshot>();
  private readonly invalidated = new Set<string>();

  /** create records a snapshot and returns the ids of the window's snapshots it invalidated. */
  create(
    windowId: number,
    framePath: string,
    tokens: TokenBinding[],
  ): { snapshot: Snapshot; invalidated: string[] } {
    this.counter += 1;
    const snapshot: Snapshot = {
      id: `s${this.counter.toString(36).padStart(6, '0')}`,
      windowId,
      framePath,
      tokens,
    };
    const previous = this.latestByWindow.get(windowId);
    const invalidated: string[] = [];
    if (previous) {
      this.byId.delete(previous.id);
      this.invalidated.add(previous.id);
      invalidated.push(previous.id);
    }
    this.latestByWindow.set(windowId, snapshot);
    this.byId.set(snapshot.id, snapshot);
    if (this.invalidated.size > 4 * MAX_SNAPSHOTS) this.invalidated.clear();
    return { snapshot, invalidated };
  }

  /** tokenFor formats the token of row n of a snapshot. */
  static tokenFor(snapshotId: string, n: number): string {
    return `${snapshotId}:${n}`;
  }

  resolve(token: string): Resolved {
    const sep = token.lastIndexOf(':');
    const id = token.slice(0, sep);
    const n = Number(token.slice(sep + 1));
    const snapshot = this.byId.get(id);
    if (!snapshot) return { kind: this.invalidated.has(id) ? 'invalidated' : 'unknown_snapshot' };
    const binding = snapshot.tokens[n];
    if (!binding) return { kind: 'unknown_row' };
    return { kind: 'ok', snapshot, binding };
  }

  latest(windowId: number): Snapshot | undefined {
    return this.latestByWindow.get(windowId);
  }

  forgetWindow(windowId: number): void {
    const s = this.latestByWindow.get(windowId);
    if (!s) return;
    this.latestByWindow.delete(windowId);
    this.byId.delete(s.id);
    this.invalidated.add(s.id);
  }
}
