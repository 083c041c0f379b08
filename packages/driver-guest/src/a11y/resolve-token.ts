import type { A11yDesktop } from './a11y-desktop.js';
import type { AppMirror } from './app-mirror.js';
import { IFACE, roleName, statesFromBits } from './atspi-constants.js';
import {
  describeMismatch,
  type Fingerprint,
  fingerprintOf,
  sameFingerprint,
} from './fingerprint.js';
import type { NodeData } from './read-node.js';
import type { Snapshot } from './snapshot-store.js';
import type { ElementState } from '@cubicle/contract/guest';

export type Resolution =
  | { kind: 'ok'; snapshot: Snapshot; mirror: AppMirror; node: NodeData; states: ElementState[] }
  | {
      kind: 'refused';
      code: 'stale_element_token' | 'ambiguous_target';
      hint: string;
      snapshotId?: string;
    }
  | { kind: 'window_not_found' };

/**
 * resolveToken turns a token into the exact live object it was issued for, or a refusal. It
 * touches only that object on the bus (role, name, states: three calls in flight at once) and
 * reads the ancestors from the mirror after a fence, so its cost does not grow with the tree.
 * It never re-targets: when the object is gone it only counts look-alikes in the window, to say
 * whether acting would have meant guessing between several (`ambiguous_target`).
 */
export async function resolveToken(
  desktop: A11yDesktop,
  token: string,
  windowId: number,
): Promise<Resolution> {
  const found = desktop.snapshots.resolve(token);
  if (found.kind === 'invalidated') {
    return {
      kind: 'refused',
      code: 'stale_element_token',
      hint: 'A newer observe of this window replaced the snapshot this token came from; use a token from the latest snapshot.',
    };
  }
  if (found.kind === 'removed') {
    return {
      kind: 'refused',
      code: 'stale_element_token',
      hint: 'A diff observe of this window listed this token as removed (the element is gone, hidden or renamed); use a token from that diff or observe again.',
    };
  }
  if (found.kind !== 'ok') {
    return {
      kind: 'refused',
      code: 'stale_element_token',
      hint: 'This token was not issued by this driver (unknown snapshot or row); observe the window and use one of its tokens.',
    };
  }
  const { snapshot, binding } = found;
  const sid = snapshot.id;
  if (snapshot.windowId !== windowId) {
    return {
      kind: 'refused',
      code: 'stale_element_token',
      snapshotId: sid,
      hint: `The token belongs to window ${snapshot.windowId}, not ${windowId}.`,
    };
  }
  const mirror = await desktop.existingMirror(binding.ref.bus);
  if (!mirror) return { kind: 'window_not_found' };
  // A web element the mirror has already seen removed is gone: refused without a bus call. A
  // navigation tears the old page down in thousands of events, and any call to the browser
  // (the fence, the identity read) waits until our side has parsed all of them: 67 ms for a
  // 6,350-node page, 1.7-23 ms at other times (measured, bench:observe). Other toolkits add
  // children silently, so their look-alikes are counted after a sync below.
  if (
    inWebDocument(binding.fingerprint) &&
    mirror.nodes.has(snapshot.framePath) &&
    !mirror.nodes.has(binding.ref.path)
  )
    return goneRefusal(mirror, snapshot, binding.fingerprint);
  // The fence and the identity read go out together: the app answers in order, so the mirror
  // holds every event sent before the fence when the identity arrives, one round trip to the
  // app instead of two (1-25 ms each on Chromium at load ~20, measured).
  const [, live] = await Promise.all([
    mirror.fence().catch(() => undefined),
    readIdentity(desktop, binding.ref.bus, binding.ref.path),
  ]);
  if (!mirror.nodes.has(snapshot.framePath)) return { kind: 'window_not_found' };

  const mirrored = mirror.nodes.get(binding.ref.path);
  if (!live || !mirrored) {
    if (mirrored) mirror.remove(binding.ref.path);
    // Count look-alikes against the window's current structure. A web document announces every
    // child it adds, so after the fence above the mirror already holds it; re-syncing would read
    // a navigation's new document whole only to refuse anyway (0.5–5.1 s onto a 2,000-row page,
    // measured on Chromium). Other toolkits add children silently (GTK3): those are re-synced.
    if (!inWebDocument(binding.fingerprint))
      await mirror.syncSubtree(snapshot.framePath).catch(() => undefined);
    return goneRefusal(mirror, snapshot, binding.fingerprint);
  }
  const now = fingerprintOf(
    { role: live.role, name: live.name },
    mirror.ancestors(binding.ref.path),
  );
  if (!sameFingerprint(binding.fingerprint, now)) {
    return {
      kind: 'refused',
      code: 'stale_element_token',
      snapshotId: sid,
      hint: `The element changed since the snapshot: ${describeMismatch(binding.fingerprint, now)}. Observe again.`,
    };
  }
  return { kind: 'ok', snapshot, mirror, node: mirrored, states: live.states };
}

/** goneRefusal refuses a token whose element is gone: ambiguous when look-alikes remain. */
function goneRefusal(mirror: AppMirror, snapshot: Snapshot, fp: Fingerprint): Resolution {
  const twins = lookAlikes(mirror, snapshot.framePath, fp);
  if (twins >= 2) {
    return {
      kind: 'refused',
      code: 'ambiguous_target',
      snapshotId: snapshot.id,
      hint: `The element is gone and ${twins} live elements share its role, name and ancestors; the driver will not guess. Observe again and pick one token.`,
    };
  }
  return {
    kind: 'refused',
    code: 'stale_element_token',
    snapshotId: snapshot.id,
    hint: 'The element this token was issued for no longer exists. Observe again.',
  };
}

async function readIdentity(
  desktop: A11yDesktop,
  appBus: string,
  path: string,
): Promise<{ role: string; name: string; states: ElementState[] } | null> {
  try {
    const [role, name, state] = await Promise.all([
      desktop.bus.call(appBus, path, IFACE.accessible, 'GetRole'),
      desktop.bus.getProperty({ bus: appBus, path }, IFACE.accessible, 'Name'),
      desktop.bus.call(appBus, path, IFACE.accessible, 'GetState'),
    ]);
    const states = statesFromBits(state[0] as number[]);
    if (states.includes('defunct')) return null;
    return { role: roleName(Number(role[0])), name: String(name), states };
  } catch {
    return null;
  }
}

function inWebDocument(fp: Fingerprint): boolean {
  return fp.role === 'document_web' || fp.ancestors.some((a) => a.role === 'document_web');
}

function lookAlikes(mirror: AppMirror, framePath: string, fp: Fingerprint): number {
  let count = 0;
  const stack = [framePath];
  while (stack.length > 0) {
    const node = mirror.nodes.get(stack.pop() as string);
    if (!node) continue;
    if (
      node.role === fp.role &&
      node.name === fp.name &&
      sameFingerprint(fp, fingerprintOf(node, mirror.ancestors(node.path)))
    )
      count++;
    stack.push(...node.children);
  }
  return count;
}
