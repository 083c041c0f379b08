// sortEvents on plain mirror data: which changes count as an action's evidence. The real
// mirror, bus and browser are in test/web-evidence.test.ts; this pins the busy rules there
// that depend on event timing, which a live page shows only now and then.
import { describe, expect, it } from 'vitest';
import type { AppMirror, MirrorEvent } from './app-mirror.js';
import {
  awaitEvidence,
  noteDelivery,
  noteUnconfirmed,
  sortEvents,
  type DeliveryWindow,
  type EvidenceScope,
} from './action-evidence.js';
import { noteIdlePoke } from './flush-page.js';
import { APP_ROOT, type NodeData } from './read-node.js';

const FRAME = '/f';
const DOC = '/doc';
const node = (path: string, parent: string, role: string): NodeData => ({
  path,
  parent,
  children: [],
  role,
  name: path,
  description: '',
  states: [],
  ifaces: new Set(),
});

/** A window with a web document holding a button, a clock and a status line. */
function mirrorWith(events: Omit<MirrorEvent, 'seq' | 'frame'>[]): AppMirror {
  const nodes = new Map<string, NodeData>([
    [FRAME, node(FRAME, APP_ROOT, 'frame')],
    [DOC, node(DOC, FRAME, 'document_web')],
    ['/button', node('/button', DOC, 'push_button')],
    ['/clock', node('/clock', DOC, 'status_bar')],
    ['/status', node('/status', DOC, 'paragraph')],
  ]);
  const ancestors = (path: string) => {
    const out: NodeData[] = [];
    for (let p = nodes.get(path)?.parent; p && p !== APP_ROOT; p = nodes.get(p)?.parent)
      out.push(nodes.get(p)!);
    return out;
  };
  const recentEvents = events.map((e, i) => ({ ...e, seq: i + 1, frame: FRAME }));
  return { nodes, recentEvents, ancestors } as unknown as AppMirror;
}

const scope: EvidenceScope = {
  framePath: FRAME,
  target: '/button',
  related: new Set(),
  document: DOC,
  documentHost: FRAME,
  tokenOf: () => undefined,
};
// The delivery began at 1,000 ms after 3 events, and its call returned at 1,005 ms.
const window: DeliveryWindow = { since: 1_000, from: 3, replied: 1_005 };
const tick = (path: string, at: number, known: boolean) => ({
  path,
  at,
  known,
  event: 'object:text-changed:insert',
});

describe('sortEvents', () => {
  it('a clock that ticked twice while still unread is busy: its next tick is an observation', () => {
    const m = mirrorWith([
      tick('/clock', 700, false),
      tick('/clock', 800, false),
      tick('/x', 900, true),
      tick('/clock', 1_002, true),
    ]);
    const sorted = sortEvents(m, window, scope);
    expect(sorted.evidence).toEqual([]);
    expect(sorted.observations).toHaveLength(1);
  });

  it('one burst while unread (a paragraph filled as the page loaded) does not make it busy', () => {
    const m = mirrorWith([
      tick('/status', 700, false),
      tick('/status', 710, false),
      tick('/x', 900, true),
      tick('/status', 1_002, true),
    ]);
    expect(sortEvents(m, window, scope).evidence).toHaveLength(1);
  });

  it("a change outside the target's document (the browser's tab) is not the page's response", () => {
    const m = mirrorWith([
      tick('/a', 900, true),
      tick('/b', 910, true),
      tick('/c', 920, true),
      tick('/tab', 1_002, true),
    ]);
    (m.nodes as Map<string, NodeData>).set('/tab', node('/tab', FRAME, 'page_tab'));
    const sorted = sortEvents(m, window, scope);
    expect(sorted.evidence).toEqual([]);
    expect(sorted.observations).toHaveLength(1);
  });

  it('a new title after a busy run of titles counts only once the document was swapped', () => {
    const title = (at: number) => ({
      path: FRAME,
      at,
      known: true,
      event: 'object:property-change:accessible-name',
    });
    // The page set its title four times before the click (a page load, a script, a navigation
    // made by other means): the window title is "counting", and its next change alone is not
    // proof. Before the fix the click then waited out the whole navigation bound (3 s).
    const m = mirrorWith([title(300), title(400), title(500), title(600), title(1_080)]);
    const win: DeliveryWindow = { since: 1_000, from: 4, replied: 1_005 };
    expect(sortEvents(m, win, scope).evidence).toEqual([]);
    const sorted = sortEvents(m, win, scope, true);
    expect(sorted.evidence).toHaveLength(1);
    expect(sorted.evidence[0]).toMatchObject({ event: 'object:property-change:accessible-name' });
  });

  // A page that renders no frames hands its changes over only when asked (flush-page.ts). Its
  // clock then changes only right after inputs: inside earlier actions' windows, which excuse
  // the changes they hold. What a poke made after such an action began released is not excused.
  it("a change released by an observe's poke inside an earlier window is busy", () => {
    const m = mirrorWith([tick('/clock', 750, true), tick('/x', 800, true), tick('/y', 810, true)]);
    m.recentEvents.push({ ...tick('/clock', 1_002, true), seq: 4, frame: FRAME });
    noteDelivery(m, { since: 600, from: 0, replied: 605 }); // window 600-805
    expect(sortEvents(m, window, scope).evidence).toHaveLength(1); // the old rule: excused
    noteIdlePoke(m, 740);
    const sorted = sortEvents(m, window, scope);
    expect(sorted.evidence).toEqual([]);
    expect(sorted.observations).toHaveLength(1);
  });

  it('a change to an element tied to an earlier target that showed nothing is not this response', () => {
    const m = mirrorWith([
      tick('/a', 700, true),
      tick('/b', 710, true),
      tick('/c', 720, true),
      tick('/status', 1_130, true),
    ]);
    const win: DeliveryWindow = { since: 1_000, from: 3, replied: 1_005 };
    expect(sortEvents(m, win, scope).evidence).toHaveLength(1);
    // "Refresh" (aria-controls the status line) showed nothing at 900: its effect may come late.
    noteUnconfirmed(m, { ...scope, target: '/refresh', related: new Set(['/status']) }, 900);
    expect(sortEvents(m, win, scope).evidence).toEqual([]);
    // For an action on a target the status line is tied to, it still counts.
    const tied = { ...scope, related: new Set(['/status']) };
    expect(sortEvents(m, win, tied).evidence).toHaveLength(1);
  });
});

describe('awaitEvidence', () => {
  /** The mirror above with a counted fence and no further events. */
  function fenced(events: Omit<MirrorEvent, 'seq' | 'frame'>[]) {
    const m = mirrorWith(events) as AppMirror & { fences: number };
    Object.assign(m, {
      fences: 0,
      lastSeq: events.length,
      fence: async () => {
        m.fences += 1;
      },
      nextEvent: () => new Promise<void>(() => undefined),
    });
    return m;
  }

  it('answers a navigation already applied without a fence round trip', async () => {
    // The new title arrived while the app, building the new page, would answer a fence late.
    const m = fenced([
      tick('/x', 900, true),
      tick('/y', 910, true),
      tick('/z', 920, true),
      { path: FRAME, at: 1_060, known: true, event: 'object:property-change:accessible-name' },
    ]);
    const seen = await awaitEvidence(m, window, scope, 3_000);
    expect(seen.evidence).toHaveLength(1);
    expect(m.fences).toBe(0);
  });

  it('answers a navigation that arrives while the fence is out, without waiting for it', async () => {
    const m = fenced([tick('/x', 900, true), tick('/y', 910, true), tick('/z', 920, true)]);
    // The app is busy building the new page: its fence would answer long after the new title.
    let next: () => void = () => undefined;
    Object.assign(m, {
      fence: () => {
        m.fences += 1;
        return new Promise<void>(() => undefined);
      },
      nextEvent: () => new Promise<void>((r) => (next = r)),
    });
    const emit = (path: string, event: string) => {
      m.lastSeq += 1;
      const known = m.nodes.has(path);
      m.recentEvents.push({ path, event, at: 1_050, known, seq: m.lastSeq, frame: FRAME });
      next();
    };
    const seen = awaitEvidence(m, window, scope, 3_000);
    await new Promise((r) => setTimeout(r, 5));
    emit('/old-doc', 'object:state-changed:defunct'); // the old page goes first
    await new Promise((r) => setTimeout(r, 5));
    emit(FRAME, 'object:property-change:accessible-name'); // then the new title
    const sorted = await seen;
    expect(sorted.evidence).toHaveLength(1);
    expect(sorted.evidence[0]).toMatchObject({ event: 'object:property-change:accessible-name' });
    expect(m.fences).toBe(1);
  });

  it('fences before answering with any other evidence (later changes may belong to it)', async () => {
    const m = fenced([
      tick('/x', 900, true),
      tick('/y', 910, true),
      tick('/z', 920, true),
      tick('/button', 1_002, true),
    ]);
    const seen = await awaitEvidence(m, window, scope, 150);
    expect(seen.evidence).toHaveLength(1);
    expect(m.fences).toBe(1);
  });
});
