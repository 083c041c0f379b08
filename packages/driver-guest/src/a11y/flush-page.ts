import type { AppMirror } from './app-mirror.js';
import { IFACE } from './atspi-constants.js';
import type { NodeData } from './read-node.js';

/**
 * A browser's renderer hands its accessibility changes to the browser in batches, at frames. A
 * page that renders no frames hands them over only when input reaches it: measured on Chromium
 * with its window minimized, a clock changing every 100 ms announced nothing for seconds, then
 * one tick 5–21 ms after each AT-SPI call the renderer has to run (DoAction, Component.ScrollTo);
 * reads (GetExtents, GetText, GetAccessibleAtPoint) are answered by the browser and release
 * nothing. The CI failure of 2026-12-07 looked the same: the clock changed 5–13 ms after each of
 * seven clicks and never between them, so it was never seen changing on its own, and its tick
 * "confirmed" a button wired to nothing.
 *
 * pokePage asks the renderer for such a call that changes nothing: Component.ScrollTo (anywhere)
 * on an element already wholly inside the page's visible area. What the page had pending then
 * arrives outside any action's window, where the busy rule sees it (action-evidence.ts), and
 * after an action it brings that action's own effect.
 */
const SCROLL_ANYWHERE = 6;

/** Pokes of one app closer together than this are one, unless asked otherwise. */
const POKE_GAP_MS = 150;

/** Candidates read per search (one GetExtents each, in parallel). */
const CANDIDATES = 6;

/** Nodes looked through for candidates, from the document down. */
const SEARCH_LIMIT = 400;

interface Poked {
  at: number;
  /** Pokes made outside any action's wait (observe, before a delivery), newest last. */
  idle: number[];
  /** The element poked last, per document: checked again (two reads) before each reuse. */
  chosen: Map<string, string>;
}

const poked = new WeakMap<AppMirror, Poked>();

/** lastPokeAt: when the app's renderer was last asked to release its changes (-Infinity: never). */
export function lastPokeAt(mirror: AppMirror): number {
  return poked.get(mirror)?.at ?? Number.NEGATIVE_INFINITY;
}

/**
 * idlePokesOf lists when pokes outside any action's wait went out. What arrives after one was
 * held by the page, not necessarily caused by the action whose window it falls in.
 */
export function idlePokesOf(mirror: AppMirror): readonly number[] {
  return poked.get(mirror)?.idle ?? [];
}

/** noteIdlePoke records a poke made outside any action's wait, at `at` (performance.now()). */
export function noteIdlePoke(mirror: AppMirror, at: number): void {
  const state: Poked = poked.get(mirror) ?? {
    at: Number.NEGATIVE_INFINITY,
    idle: [],
    chosen: new Map(),
  };
  poked.set(mirror, state);
  state.idle.push(at);
  if (state.idle.length > 64) state.idle.splice(0, state.idle.length - 64);
}

type Rect = [number, number, number, number];

/**
 * pokePage makes the page holding `document` release what it has pending (see above). Resolves
 * true once the call was answered, false when it was skipped (a poke just went out, or no element
 * lies wholly in view: a ScrollTo there could scroll the page). `idle`: the poke is not part of an
 * action's wait (see idlePokesOf); `gapMs`: how soon after the last poke this one may follow
 * (POKE_GAP_MS unless given). Never throws.
 */
export async function pokePage(
  mirror: AppMirror,
  document: string,
  opts: { idle: boolean; gapMs?: number },
): Promise<boolean> {
  const state: Poked = poked.get(mirror) ?? {
    at: Number.NEGATIVE_INFINITY,
    idle: [],
    chosen: new Map(),
  };
  poked.set(mirror, state);
  const now = performance.now();
  if (now - state.at < (opts.gapMs ?? POKE_GAP_MS)) return false;
  state.at = now;
  if (opts.idle) noteIdlePoke(mirror, now);
  try {
    const known = state.chosen.get(document);
    const candidates = known && mirror.nodes.has(known) ? [known] : candidatesIn(mirror, document);
    if (candidates.length === 0) return false;
    const [area, ...rects] = await Promise.all(
      [document, ...candidates].map((p) => extentsOf(mirror, p)),
    );
    const index = rects.findIndex((r) => area && r && isInside(r, area));
    const path = candidates[index];
    if (!path) {
      state.chosen.delete(document);
      return false;
    }
    state.chosen.set(document, path);
    await mirror.bus.call(mirror.appBus, path, IFACE.component, 'ScrollTo', 'u', [SCROLL_ANYWHERE]);
    return true;
  } catch {
    return false;
  }
}

/**
 * candidatesIn lists shown elements with a Component below the document, breadth first, leaves
 * before containers (a page's outer sections often reach past the visible area).
 */
function candidatesIn(mirror: AppMirror, document: string): string[] {
  const leaves: string[] = [];
  const others: string[] = [];
  const queue = [...(mirror.nodes.get(document)?.children ?? [])];
  for (let i = 0; i < queue.length && i < SEARCH_LIMIT && leaves.length < CANDIDATES; i++) {
    const node: NodeData | undefined = mirror.nodes.get(queue[i] as string);
    if (!node || !node.states.includes('showing')) continue;
    if (node.ifaces.has(IFACE.component) && node.states.includes('visible'))
      (node.children.length === 0 ? leaves : others).push(node.path);
    queue.push(...node.children);
  }
  return [...leaves, ...others].slice(0, CANDIDATES);
}

async function extentsOf(mirror: AppMirror, path: string): Promise<Rect | null> {
  try {
    const [r] = await mirror.bus.call(mirror.appBus, path, IFACE.component, 'GetExtents', 'u', [0]);
    return r as Rect;
  } catch {
    return null;
  }
}

/** isInside: `r` has an area and lies wholly in `area` (screen coordinates). */
function isInside(r: Rect, area: Rect): boolean {
  const [x, y, w, h] = r;
  const [ax, ay, aw, ah] = area;
  return w > 0 && h > 0 && x >= ax && y >= ay && x + w <= ax + aw && y + h <= ay + ah;
}
