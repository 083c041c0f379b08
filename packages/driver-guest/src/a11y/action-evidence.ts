import type { ActionEvidence } from '@cubicle/contract/guest';
import type { AppMirror, MirrorEvent } from './app-mirror.js';
import type { AtspiBus } from './atspi-bus.js';
import { IFACE, isSecure } from './atspi-constants.js';
import { nextEventOr } from './action-latency.js';
import { idlePokesOf, lastPokeAt, pokePage } from './flush-page.js';

// Layout and redraw notifications follow any input and say nothing about its effect.
const NOISE =
  /^object:(bounds-changed|visible-data-changed)|^object:state-changed:(armed|pressed|focused|active)/;

/**
 * The least history before a first action: an element that changes on its own (a clock, a
 * spinner, a page's animation) must have been seen changing before the action, or its next
 * change would look like the app's response. Whatever a busy element does afterwards is an
 * observation, never evidence.
 */
const BASELINE_MS = 500;

/**
 * How far back a change marks an element busy. A timer on a loaded page stalls for longer than
 * BASELINE_MS when the renderer is starved (2 cores shared by several builds here), and its next
 * tick then lands in the response window of an idle click: an element that changed on its own
 * at any time in this span is never taken as the app's response. Changes inside an earlier
 * action's response window are not "on its own" (a status line an earlier click set stays
 * usable as evidence for the next one).
 */
const BUSY_MEMORY_MS = 10_000;

/** Response windows of earlier deliveries per mirror, so their effects do not count as busy. */
const responses = new WeakMap<AppMirror, [number, number][]>();

/**
 * Actions that showed nothing, per mirror: when, and the elements tied to their targets. An
 * action's effect can come after its wait ended (a starved renderer, a page that renders no
 * frames: see flush-page.ts), and then lands in the next action's window. Measured under load:
 * "Refresh" (aria-controls the status line) showed nothing in 549 ms, and its status change
 * came 130 ms into the next click, on a button wired to nothing, which it "confirmed". A change
 * to an element tied to such an earlier target is therefore never taken as a later action's
 * response by timing alone (it still counts for an action on a target it is tied to).
 */
const unconfirmed = new WeakMap<AppMirror, { at: number; paths: Set<string> }[]>();

/**
 * On a web page, a page that rendered no frames keeps its changes until the renderer is asked
 * something (flush-page.ts). Observing pokes the page; a delivery not preceded by a poke this
 * recent pokes it first, so a self-changing element shows as busy (BUSY_MEMORY_MS covers it).
 */
const POKE_FRESH_MS = 5_000;

/**
 * How often a web action's wait pokes its page (see awaitEvidence): often at first, where an
 * effect lands, then at the usual gap (a link's wait for its navigation lasts up to 3 s).
 */
const ACTION_POKE_GAP_MS = 30;
const ACTION_POKE_OFTEN_MS = 300;

/** How long a delivery waits for what its own poke released (the first event ends the wait). */
const POKE_WAIT_MS = 60;

// AT-SPI relation types that tie another element to the target's effect: label-for/labelled-by,
// controller-for/controlled-by (aria-controls), member-of (radio groups), description and
// error-message links. Embedding, flows-to and window relations say nothing about an effect.
const TIED_RELATIONS = new Set([1, 2, 3, 4, 5, 17, 18, 21]);

/**
 * A change the app makes this soon after the delivery returned, to an element that was quiet
 * through the baseline, is taken as the app's response to the action (GTK handles a click from
 * its main loop right after DoAction replies; a browser's renderer answers within a frame or
 * two). Limit, by design: an element that changes rarely (say every few seconds) on its own and
 * happens to change inside this window would count; the busy baseline removes all faster ones.
 */
const RESPONSE_MS = 200;

const NAVIGATION = /^document:(load-complete|reload)$|^object:property-change:accessible-name$/;

/** EvidenceScope is what an action's effect may legitimately show up on. */
export interface EvidenceScope {
  /** The window's frame: events of other windows are not even observations. */
  framePath: string;
  /** The target element; events from it (and below it) are evidence. */
  target: string;
  /** Elements tied to the target by relations, with their subtrees. */
  related: Set<string>;
  /** The web document holding the target, if any: a navigation in it is evidence. */
  document: string | null;
  /** The object holding that document (its parent), where a navigation swaps it for another. */
  documentHost: string | null;
  /** Token of an element in the snapshot the action was resolved against. */
  tokenOf(path: string): string | undefined;
}

/** DeliveryWindow brackets one delivery call in the mirror's event sequence. */
export interface DeliveryWindow {
  /** performance.now() when delivery began; nothing before it is evidence. */
  since: number;
  /** Last event applied before the call was sent. */
  from: number;
  /** performance.now() when the delivery call returned. */
  replied: number;
}

/** SortedEvents splits what was seen after an action into proof and mere observations. */
export interface SortedEvents {
  evidence: ActionEvidence[];
  observations: ActionEvidence[];
}

/** Which element each evidence item came from, to describe it after sorting. */
const pathOf = new WeakMap<ActionEvidence, string>();

/** Evidence items that are a navigation of the target's document (see awaitEvidence). */
const navigations = new WeakSet<ActionEvidence>();

/**
 * deliverWatched sends a delivery call and brackets it in the mirror's event sequence: `from` is
 * the last event applied before the call went out, `replied` when its answer came. Measured on
 * GTK3, a button's handler ran sometimes while DoAction was handled (its label's events came
 * before the reply) and sometimes right after it (5 ms later), so the reply alone does not
 * bracket the effect: RESPONSE_MS after it does. (A Ping pipelined before the call cannot mark
 * the start either: its reply resolves a few promise hops after signals parsed with it.)
 */
export async function deliverWatched<T>(
  mirror: AppMirror,
  send: () => Promise<T>,
  webDocument: string | null = null,
): Promise<{ value: T; window: DeliveryWindow }> {
  const isPokeStale =
    webDocument !== null && performance.now() - lastPokeAt(mirror) > POKE_FRESH_MS;
  const poked = isPokeStale && (await pokePage(mirror, webDocument, { idle: true }));
  // Without a baseline a busy element cannot be told from a response: the first action on a
  // freshly observed app waits (once, at most BASELINE_MS) until the mirror has watched it.
  const watched = performance.now() - mirror.watchingSince;
  if (watched < BASELINE_MS) await new Promise((r) => setTimeout(r, BASELINE_MS - watched));
  else if (poked) {
    await nextEventOr(mirror, POKE_WAIT_MS);
    await mirror.fence().catch(() => undefined);
  }
  const since = performance.now();
  const from = mirror.lastSeq;
  const value = await send();
  const window = { since, from, replied: performance.now() };
  noteDelivery(mirror, window);
  return { value, window };
}

/** noteDelivery remembers a delivery's response window (see `responses`). */
export function noteDelivery(mirror: AppMirror, window: DeliveryWindow): void {
  const list = responses.get(mirror) ?? [];
  list.push([window.since, window.replied + RESPONSE_MS]);
  if (list.length > 64) list.splice(0, list.length - 64);
  responses.set(mirror, list);
}

/** noteUnconfirmed records an action that showed nothing (see `unconfirmed`). */
export function noteUnconfirmed(
  mirror: AppMirror,
  scope: EvidenceScope,
  at = performance.now(),
): void {
  const list = unconfirmed.get(mirror) ?? [];
  list.push({ at, paths: new Set([scope.target, ...scope.related]) });
  if (list.length > 16) list.splice(0, list.length - 16);
  unconfirmed.set(mirror, list);
}

/** isLateEffect: the element is tied to an earlier target that showed nothing, not long ago. */
function isLateEffect(mirror: AppMirror, path: string, since: number): boolean {
  return (unconfirmed.get(mirror) ?? []).some(
    (u) => u.at <= since && u.at >= since - BUSY_MEMORY_MS && u.paths.has(path),
  );
}

/**
 * relatedPaths reads the target's relation set (or takes `early`, the same read already in
 * flight) and returns the tied elements and subtrees.
 */
export async function relatedPaths(
  bus: AtspiBus,
  mirror: AppMirror,
  target: string,
  early?: Promise<unknown[] | null>,
): Promise<Set<string>> {
  const out = new Set<string>(mirror.subtree(target));
  try {
    const [set] =
      (await early) ?? (await bus.call(mirror.appBus, target, IFACE.accessible, 'GetRelationSet'));
    for (const [type, targets] of set as [number, [string, string][]][]) {
      if (!TIED_RELATIONS.has(type)) continue;
      for (const [busName, path] of targets) {
        if (busName !== mirror.appBus) continue;
        out.add(path);
        for (const p of mirror.subtree(path)) out.add(p);
      }
    }
  } catch {
    // No relations readable: the target itself still counts.
  }
  return out;
}

/** documentOf finds the outermost web document above a node, from the mirror. */
export function documentOf(mirror: AppMirror, path: string): string | null {
  let found: string | null = null;
  const self = mirror.nodes.get(path);
  if (self?.role === 'document_web') found = path;
  for (const a of mirror.ancestors(path)) if (a.role === 'document_web') found = a.path;
  return found;
}

/**
 * isTopDocument: a page that loaded in the window's top document slot. A navigation replaces
 * the document object, so the new one is often not in the mirror yet when its load completes;
 * an unknown object announcing load-complete is taken as that new top document. An iframe's
 * document, known and nested in another, is not.
 */
function isTopDocument(mirror: AppMirror, path: string): boolean {
  const node = mirror.nodes.get(path);
  return !node || (node.role === 'document_web' && documentOf(mirror, path) === path);
}

/**
 * busyPaths lists the elements that changed on their own before this delivery: within
 * BUSY_MEMORY_MS, outside earlier actions' response windows, while the mirror knew them.
 * (Objects a page creates anew on each tick are unknown to the mirror when their events arrive
 * and never count as evidence either: no frame.)
 */
function busyPaths(mirror: AppMirror, window: DeliveryWindow): Map<string, number> {
  const busy = new Map<string, number>();
  /** When each object's latest burst of events began, while it was unknown. */
  const unknownBursts = new Map<string, number>();
  const earlier = (responses.get(mirror) ?? []).filter(([from]) => from < window.since);
  const pokes = idlePokesOf(mirror);
  for (const e of mirror.recentEvents) {
    if (e.seq > window.from || e.at < window.since - BUSY_MEMORY_MS || NOISE.test(e.event))
      continue;
    // Inside an earlier action's window, but after a poke made since that action began: the
    // page may have released a change it held (flush-page.ts), so it is not that action's.
    if (
      earlier.some(
        ([from, to]) => e.at >= from && e.at <= to && !pokes.some((p) => p > from && p <= e.at),
      )
    )
      continue;
    // An object unknown to the mirror when its event came was being built, not changing under
    // watch: Chromium fills a page's paragraphs while loading it, before the mirror has read
    // them, and that text insert 7 s earlier made the fixture's status line "busy", so the
    // "Delete" click it answered was judged unverifiable (measured). One burst is that; a
    // second burst of the same object is a change on its own even before the mirror read it (a
    // page's clock, read 130 ms before the first click, ticked twice while unknown and its next
    // tick "confirmed" a click wired to nothing: measured).
    if (!e.known) {
      const lastBurst = unknownBursts.get(e.path);
      if (lastBurst === undefined || e.at - lastBurst >= BURST_GAP_MS)
        unknownBursts.set(e.path, e.at);
      if (lastBurst !== undefined && e.at - lastBurst >= BURST_GAP_MS)
        busy.set(e.path, (busy.get(e.path) ?? 0) + 1);
      continue;
    }
    busy.set(e.path, (busy.get(e.path) ?? 0) + 1);
  }
  return busy;
}

/** Events of one object this close together are one change (a clock's tick is four events). */
const BURST_GAP_MS = 30;

/**
 * A page load names the window once or twice (seen: twice, 19 ms apart); a page counting in
 * its title renames it on every tick. A window renamed fewer times than this in BUSY_MEMORY_MS
 * was loading, not counting, and its next new title is still a navigation's news: a link
 * clicked 8 s after its page loaded was otherwise judged unverifiable (measured).
 */
const COUNTING_TITLE_CHANGES = 3;

/**
 * sortEvents classifies the events of the target's window since delivery began. Evidence:
 * events from the target or elements related to it, a navigation of its document, or the app's
 * prompt response to the call on an element that was not already changing on its own.
 * Everything else is an observation. `isReplaced`: the target's document was found swapped for
 * another (see isDocumentReplaced), so a new window title is that navigation's even when the
 * title had been changing before.
 */
export function sortEvents(
  mirror: AppMirror,
  window: DeliveryWindow,
  scope: EvidenceScope,
  isReplaced = false,
): SortedEvents {
  const busy = busyPaths(mirror, window);
  const evidence: ActionEvidence[] = [];
  const observations: ActionEvidence[] = [];
  for (const e of mirror.recentEvents) {
    if (e.at < window.since) continue;
    if (NOISE.test(e.event) || e.frame !== scope.framePath) continue;
    const isTied = scope.related.has(e.path) || e.path === scope.target;
    // The window's title follows its top document's: a new title is the document's own news,
    // unless the title was already changing on its own (a page counting in its title).
    const isNavigation =
      scope.document !== null &&
      ((e.path === scope.document && NAVIGATION.test(e.event)) ||
        (e.event === 'document:load-complete' && isTopDocument(mirror, e.path)) ||
        (isTitleChange(e, scope) &&
          (isReplaced || (busy.get(e.path) ?? 0) < COUNTING_TITLE_CHANGES)));
    // On a web page the app's response is in the page: the browser's own chrome (a tab whose
    // name carries a memory figure, the address bar) changes on its own schedule, and seen
    // within the window it "confirmed" a click wired to nothing (CI, 2026-12-01). A navigation
    // still counts above through the document or the window's title.
    const isResponse =
      e.seq > window.from &&
      e.at <= window.replied + RESPONSE_MS &&
      !busy.has(e.path) &&
      !isLateEffect(mirror, e.path, window.since) &&
      !e.event.startsWith('document:') &&
      (scope.document === null || documentOf(mirror, e.path) === scope.document);
    const list = isTied || isNavigation || isResponse ? evidence : observations;
    if (list.length >= 16) continue;
    const item = toEvidence(mirror, e, window.since, scope);
    pathOf.set(item, e.path);
    if (isNavigation) navigations.add(item);
    list.push(item);
  }
  return { evidence, observations };
}

function isTitleChange(e: MirrorEvent, scope: EvidenceScope): boolean {
  return e.path === scope.framePath && e.event === 'object:property-change:accessible-name';
}

/**
 * isDocumentReplaced asks whether the target's top document object is gone from its host: a
 * navigation swaps the document object (a page counting in its title does not). One GetChildren
 * on the host, asked only once a new title arrived that the busy rule would not take: the window
 * had been renamed three times or more in the last 10 s (pages navigated by other means, a page
 * that set its title a few times), and a link click then waited out the whole 3 s navigation
 * bound although the title changed at 73 ms (measured on Chromium, judged unverifiable).
 */
async function isDocumentReplaced(mirror: AppMirror, scope: EvidenceScope): Promise<boolean> {
  if (scope.document === null || scope.documentHost === null) return false;
  if (!mirror.nodes.has(scope.document)) return true;
  try {
    const [children] = await mirror.bus.call(
      mirror.appBus,
      scope.documentHost,
      IFACE.accessible,
      'GetChildren',
    );
    return !(children as [string, string][]).some(
      ([bus, path]) => bus === mirror.appBus && path === scope.document,
    );
  } catch {
    return false; // the host cannot be read: nothing is proven
  }
}

function toEvidence(
  mirror: AppMirror,
  e: MirrorEvent,
  since: number,
  scope: EvidenceScope,
): ActionEvidence {
  const node = mirror.nodes.get(e.path);
  const token = scope.tokenOf(e.path);
  return {
    kind: 'a11y_event',
    event: e.event.slice(0, 128),
    ...(token ? { element_token: token } : {}),
    ...(node ? { role: node.role.slice(0, 64), name: node.name.slice(0, 1024) } : {}),
    after_ms: Math.max(0, e.at - since),
  };
}

/**
 * fenceUnlessNavigated fences the mirror (every event the app sent before is then applied), or
 * answers sooner with a navigation of the target's document applied before or while the fence is
 * out: the events sorted then, or null once the fence answered. A fence is a round trip to the
 * app, which is then busy building the new page: measured on Chromium (libxslt index ->
 * Introduction, load 10-20), the new title arrived and the fence answered 7-70 ms later; the
 * title came one D-Bus message after the event that woke the wait, so a look only before the
 * fence missed it most of the time. Only a navigation ends the wait early: other evidence may be
 * the first of several changes, and an element the target controls changes after the target's
 * own events (Firefox: the controlled paragraph's text came after the button's; see 327aeed).
 */
async function fenceUnlessNavigated(
  mirror: AppMirror,
  window: DeliveryWindow,
  scope: EvidenceScope,
  isReplaced: boolean,
): Promise<SortedEvents | null> {
  const navigation = (): SortedEvents | null => {
    const sorted = sortEvents(mirror, window, scope, isReplaced);
    return sorted.evidence.some((item) => navigations.has(item)) ? sorted : null;
  };
  // Sorting is a pass over the recent events: done only when one that can be a navigation came.
  let looked = window.from;
  const mayNavigate = (): boolean => {
    const events = mirror.recentEvents;
    let found = false;
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i] as MirrorEvent;
      if (e.seq <= looked) break;
      if (isNavigationLike(e, scope)) found = true;
    }
    looked = mirror.lastSeq;
    return found;
  };
  if (mayNavigate()) {
    const early = navigation();
    if (early) return early;
  }
  let answered = false;
  const fenced = mirror.fence().then(
    () => void (answered = true),
    () => void (answered = true),
  );
  while (!answered) {
    await Promise.race([fenced, mirror.nextEvent()]);
    if (answered || !mayNavigate()) continue;
    const sorted = navigation();
    if (sorted) return sorted;
  }
  return null;
}

/** isNavigationLike: an event that sortEvents may take as a navigation of the scope's document. */
function isNavigationLike(e: MirrorEvent, scope: EvidenceScope): boolean {
  if (scope.document === null) return false;
  return (
    e.event.startsWith('document:') ||
    (e.event === 'object:property-change:accessible-name' &&
      (e.path === scope.framePath || e.path === scope.document))
  );
}

/**
 * withText names evidence whose element has no accessible name by its text (a web paragraph's
 * name is empty; its new text is the effect). Password fields are never read.
 */
async function withText(mirror: AppMirror, items: ActionEvidence[]): Promise<ActionEvidence[]> {
  return Promise.all(
    items.map(async (item) => {
      const path = pathOf.get(item);
      const node = path ? mirror.nodes.get(path) : undefined;
      if (item.kind !== 'a11y_event' || item.name || !node || !node.ifaces.has(IFACE.text))
        return item;
      if (isSecure(node.role)) return item;
      const text = await mirror.bus
        .call(mirror.appBus, node.path, IFACE.text, 'GetText', 'ii', [0, 1024])
        .then(
          (b) => String(b[0] ?? ''),
          () => '',
        );
      return text ? { ...item, name: text.slice(0, 1024) } : item;
    }),
  );
}

/**
 * awaitEvidence waits for evidence after a delivery: a fence first (what the app emitted while
 * handling the call is then in), then a fenced look each time an event arrives (at least every
 * 10 ms) up to `settleMs` for work the app does later (GTK's idle loop, a browser's renderer
 * round trip). It stops at the first evidence (a navigation as soon as it is applied, without
 * the fence), so the bound only costs when the action shows nothing tied to it.
 */
export async function awaitEvidence(
  mirror: AppMirror,
  window: DeliveryWindow,
  scope: EvidenceScope,
  settleMs = 150,
): Promise<SortedEvents> {
  const started = performance.now();
  const deadline = started + settleMs;
  let isReplaced = false;
  let probedSeq = window.from;
  for (;;) {
    const navigated = await fenceUnlessNavigated(mirror, window, scope, isReplaced);
    if (navigated) return { ...navigated, evidence: await withText(mirror, navigated.evidence) };
    let sorted = sortEvents(mirror, window, scope, isReplaced);
    // A new title the busy rule did not take: was the document swapped (a navigation)?
    const isNewTitle = mirror.recentEvents.some(
      (e) => e.seq > probedSeq && e.at >= window.since && isTitleChange(e, scope),
    );
    if (sorted.evidence.length === 0 && !isReplaced && isNewTitle) {
      probedSeq = mirror.lastSeq;
      isReplaced = await isDocumentReplaced(mirror, scope);
      if (isReplaced) sorted = sortEvents(mirror, window, scope, true);
    }
    if (sorted.evidence.length > 0)
      return { ...sorted, evidence: await withText(mirror, sorted.evidence) };
    if (performance.now() >= deadline) {
      noteUnconfirmed(mirror, scope);
      return sorted;
    }
    // A page that renders no frames keeps the action's effect until asked (flush-page.ts), and
    // a poke that reaches the renderer before the page has run the action's handler releases
    // only what was pending before it (measured: one poke right after DoAction brought the
    // clock, not the click's status line): ask again while waiting. On a page that renders,
    // this changes nothing.
    if (scope.document !== null)
      void pokePage(mirror, scope.document, {
        idle: false,
        ...(performance.now() - started < ACTION_POKE_OFTEN_MS
          ? { gapMs: ACTION_POKE_GAP_MS }
          : {}),
      });
    await nextEventOr(mirror, Math.min(10, deadline - performance.now()));
  }
}
