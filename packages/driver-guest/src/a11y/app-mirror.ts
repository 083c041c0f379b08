import type { ElementState } from '@cubicle/contract/guest';
import type dbus from 'dbus-next';
import type { AtspiBus } from './atspi-bus.js';
import { IFACE, roleName, statesFromBits } from './atspi-constants.js';
import { CONTAINER_ROLES, VIEWPORT_ROLES } from './role-sets.js';
import { type CacheItem, nodeFromCacheItem, readSeed } from './seed-from-cache.js';
import { ExtentCache } from './extent-cache.js';
import { HUGE_CHILD_COUNT, visibleDescendants } from './visible-descendants.js';
import { showingSubtrees } from './showing-subtrees.js';
import { APP_ROOT, type NodeData, readSubtree } from './read-node.js';

type Message = InstanceType<typeof dbus.Message>;

/**
 * AppMirror keeps one application's accessibility tree in memory, seeded once by
 * `Cache.GetItems` and then kept current from the app's own events, so observe reads memory
 * instead of the bus. GTK3 does not announce every change (children packed with
 * GtkBox.pack_start emit nothing), so events that hint at a structural change (children-changed,
 * bounds-changed, visible-data-changed) mark the node's child list dirty, `syncSubtree` compares
 * child counts, and `sync` re-reads only the lists in doubt before an observe. `sync` also fences: a round trip to the app guarantees
 * every event it emitted before has been applied (D-Bus keeps per-sender order).
 */
/** Controls a caller finds by name: an empty cached name for one of these is re-read. */
const NAMED_ROLES = new Set([
  'push_button',
  'toggle_button',
  'check_box',
  'radio_button',
  'entry',
  'password_text',
  'link',
  'combo_box',
  'page_tab',
  'menu_item',
  'heading',
]);

/** How long, and for how many objects, a change to an unknown object is remembered (see unseen). */
const UNSEEN_MS = 30_000;
const UNSEEN_MAX = 8_192;

/** Web roles that always hold something (text or controls): empty and nameless, they are suspect. */
const HOLLOW_ROLES = new Set([
  'label',
  'form',
  'paragraph',
  'heading',
  'section',
  'list',
  'list_item',
  'table_row',
  'table_cell',
]);

/** How many suspect web elements one observe counts (see hollowIn). */
const HOLLOW_MAX = 64;

/** How long a newly read object's states stay suspect (see freshlyRead). */
const FRESH_MS = 2_000;

/** How often one quiet web document's live state is asked at most (see quietDocuments). */
const QUIET_RECHECK_MS = 2_000;

export class AppMirror {
  readonly nodes = new Map<string, NodeData>();
  readonly extents = new ExtentCache();
  private readonly dirtyChildren = new Set<string>();
  /** Controls announced without a name, whose name is read at the next sync (see NAMED_ROLES). */
  private readonly dirtyNames = new Set<string>();
  /** Objects whose `showing` may have changed silently (scrolled or resized viewports). */
  private readonly dirtyStates = new Set<string>();
  /**
   * Objects that had a change event while the mirror did not know them yet, by when. A subtree
   * read takes seconds on a large page (Chromium: no usable cache, ~6,000 objects walked) and
   * its objects enter the mirror only when the read ends; a page still loading meanwhile adds
   * rows to a table read half-way, and its children-changed events named an object the mirror
   * did not have, so they were dropped: the mirror then kept 1,238–1,595 of 2,000 rows for good.
   * Once such an object is known, its children, states and name are read again.
   */
  private readonly unseen = new Map<string, number>();
  /** Objects that held a web document: their child list is re-read before each observe. */
  private readonly documentHosts = new Set<string>();
  /** Parents whose last child list named objects that could not be read (see sync). */
  private readonly unreadParents = new Set<string>();
  /**
   * Objects read recently, by when: GTK maps them (sets `showing`) a frame later, silently, and on
   * a busy machine that frame can come after the next sync, so their states are re-read on every
   * sync for FRESH_MS rather than once.
   */
  private readonly freshlyRead = new Map<string, number>();
  /** Web documents whose live state was asked because nothing in them showed, by when. */
  private readonly quietChecked = new Map<string, number>();
  /** Events seen since a marker, used as action evidence (`a11y_event`). */
  readonly recentEvents: MirrorEvent[] = [];
  /** Sequence number of the last event applied: orders events against method replies. */
  lastSeq = 0;
  /**
   * When the mirror's watch began: once its seed (the first read of the app's tree) is in. Events
   * that arrive while an object is being read do not mark it busy (busyPaths), so a history that
   * began at construction was partly blind: a page's clock read 130 ms before the first click had
   * no known tick yet, and its next tick "confirmed" a click wired to nothing (measured).
   */
  watchingSince = performance.now();
  /** Resolves when the next event is applied; one shared promise, however many wait on it. */
  private nextApplied: { promise: Promise<void>; resolve: () => void } | null = null;

  constructor(
    readonly bus: AtspiBus,
    readonly appBus: string,
  ) {}

  /** seed reads the whole tree once, through the bridge's cache when it has one. */
  async seed(): Promise<void> {
    const { nodes, unordered } = await readSeed(this.bus, this.appBus);
    for (const [p, n] of nodes) {
      this.nodes.set(p, n);
      this.markIfUnnamed(n);
    }
    for (const p of unordered) this.dirtyChildren.add(p);
    // Without a cache the seed is a walk, and it can drop objects as sync's reads do.
    this.noteDangling(nodes.values(), this.dirtyChildren);
    this.watchingSince = performance.now();
  }

  /** apply folds one signal from this app into the mirror; it never calls the bus. */
  apply(msg: Message): void {
    const path = msg.path;
    const member = msg.member;
    if (msg.interface === IFACE.cache) {
      if (member === 'AddAccessible') {
        const item = msg.body[0] as CacheItem;
        const node = nodeFromCacheItem(this.appBus, item);
        if (item[4] > HUGE_CHILD_COUNT) node.huge = true;
        const old = this.nodes.get(node.path);
        if (old) node.children = old.children;
        this.nodes.set(node.path, node);
        this.markIfUnnamed(node);
        if (node.parent) this.dirtyChildren.add(node.parent);
      } else if (member === 'RemoveAccessible') {
        this.remove((msg.body[0] as [string, string])[1]);
      }
      this.touch(path, `cache:${member}`);
      return;
    }
    if (msg.interface === 'org.a11y.atspi.Event.Document') {
      // load-complete / reload / page-changed: how a navigation shows in the target's document.
      this.touch(path, `document:${kebab(member)}`);
      return;
    }
    if (msg.interface !== 'org.a11y.atspi.Event.Object') return;
    const [detail, d1, , variant] = msg.body as [string, number, number, { value: unknown }];
    const node = this.nodes.get(path);
    const event = `object:${kebab(member)}${detail ? `:${detail}` : ''}`;
    if (!node && member !== 'BoundsChanged' && member !== 'VisibleDataChanged') {
      this.unseen.delete(path);
      this.unseen.set(path, performance.now());
      if (this.unseen.size > UNSEEN_MAX) this.unseen.delete(this.unseen.keys().next().value!);
    }
    switch (member) {
      case 'ChildrenChanged': {
        const child = (variant.value as [string, string])[1];
        if (detail.startsWith('remove')) this.remove(child);
        if (node) this.dirtyChildren.add(path);
        break;
      }
      case 'PropertyChange':
        if (!node) break;
        if (detail === 'accessible-name') node.name = String(variant.value ?? '');
        else if (detail === 'accessible-description')
          node.description = String(variant.value ?? '');
        else if (detail === 'accessible-role') node.role = roleName(Number(variant.value));
        else if (detail === 'accessible-parent') this.dirtyChildren.add(path);
        else if (detail === 'accessible-value' && node.role === 'scroll_bar' && node.parent) {
          this.markStates(node.parent);
          this.extents.drop(this.subtree(node.parent));
        }
        break;
      case 'StateChanged':
        if (!node) break;
        if (detail === 'defunct' && d1 === 1) {
          this.remove(path);
          break;
        }
        this.setState(node, detail, d1 === 1);
        break;
      case 'BoundsChanged':
      case 'VisibleDataChanged':
        if (!node) break;
        this.dirtyChildren.add(path);
        // GTK3 computes `showing` from the viewport on demand and announces no change when a
        // viewport is resized or scrolled: re-read the states below it at the next sync.
        if (member === 'BoundsChanged') {
          const rect = Array.isArray(variant.value) ? (variant.value as number[]) : [];
          const moved = this.extents.onBounds(path, rect, () => this.subtree(path));
          if (moved && VIEWPORT_ROLES.has(node.role)) this.markStates(path);
        }
        break;
      default:
        break;
    }
    this.touch(path, event);
  }

  /**
   * markIfUnnamed queues a control whose cached name is empty for a direct read. Firefox fills
   * its bridge's cache when an object is created, before a button's or a labelled field's name
   * is computed from its content or label, and announces no change afterwards (measured on
   * Firefox ESR 128: every "Delete" button and labelled input cached nameless, named when read).
   */
  private markIfUnnamed(node: NodeData): void {
    if (node.name === '' && NAMED_ROLES.has(node.role)) this.dirtyNames.add(node.path);
  }

  /** subtree lists an object and everything below it, from the mirror. */
  subtree(root: string): string[] {
    const out: string[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const n = this.nodes.get(stack.pop() as string);
      if (!n) continue;
      out.push(n.path);
      stack.push(...n.children);
    }
    return out;
  }

  private markStates(root: string): void {
    const stack = [root];
    while (stack.length > 0) {
      const n = this.nodes.get(stack.pop() as string);
      if (!n) continue;
      this.dirtyStates.add(n.path);
      stack.push(...n.children);
    }
  }

  private setState(node: NodeData, detail: string, on: boolean): void {
    const state = detail.replace(/-/g, '_') as ElementState;
    const has = node.states.includes(state);
    if (on && !has) node.states = [...node.states, state];
    if (!on && has) node.states = node.states.filter((s) => s !== state);
  }

  private touch(path: string, event: string): void {
    this.lastSeq += 1;
    this.recentEvents.push({
      seq: this.lastSeq,
      at: performance.now(),
      path,
      event,
      frame: this.frameOf(path),
      known: this.nodes.has(path),
    });
    // Enough for a browser's animation to not push out the baseline before an action.
    if (this.recentEvents.length > 2048)
      this.recentEvents.splice(0, this.recentEvents.length - 2048);
    const next = this.nextApplied;
    this.nextApplied = null;
    next?.resolve();
  }

  /**
   * nextEvent resolves once another event has been applied: an action waiting for its effect
   * wakes when something arrives instead of on its next poll (a 10 ms poll added 0-10 ms to a
   * web click whose effect came 12 ms after delivery: p50 27 ms against 16 ms, measured).
   */
  nextEvent(): Promise<void> {
    if (!this.nextApplied) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.nextApplied = { promise, resolve };
    }
    return this.nextApplied.promise;
  }

  /** frameOf names the top-level (child of the app root) an object belongs to, if known. */
  frameOf(path: string): string | null {
    let p: string | null = path;
    for (let i = 0; p && i < 256; i++) {
      const n = this.nodes.get(p);
      if (!n) return null;
      if (n.parent === APP_ROOT) return p;
      p = n.parent;
    }
    return null;
  }

  /** remove drops an object and everything below it, and unlinks it from its parent. */
  remove(path: string): void {
    const node = this.nodes.get(path);
    if (!node) return;
    const parent = node.parent ? this.nodes.get(node.parent) : undefined;
    if (parent) parent.children = parent.children.filter((c) => c !== path);
    const stack = [path];
    while (stack.length > 0) {
      const p = stack.pop() as string;
      const n = this.nodes.get(p);
      if (!n) continue;
      this.nodes.delete(p);
      this.dirtyChildren.delete(p);
      this.extents.forget(p);
      stack.push(...n.children);
    }
  }

  /** fence returns once every event the app emitted before it has been applied. */
  async fence(): Promise<void> {
    await this.bus.call(this.appBus, APP_ROOT, 'org.freedesktop.DBus.Peer', 'Ping');
  }

  /**
   * sync re-reads the child lists marked dirty (and the subtrees of children it did not know),
   * after a fence. Costs nothing when no structural hint arrived since the last sync.
   */
  async sync(opts: { isFenced?: boolean } = {}): Promise<void> {
    // `isFenced`: the caller has just had replies from the app, sent after every event it
    // emitted before them (the app answers in order): a fence would add a round trip, no event.
    if (!opts.isFenced) await this.fence();
    const now = performance.now();
    for (const [p, at] of this.freshlyRead) {
      // Once mapped (`showing`), GTK reports further changes: the object is no longer suspect.
      const node = this.nodes.get(p);
      if (!node || now - at > FRESH_MS || node.states.includes('showing'))
        this.freshlyRead.delete(p);
      else this.dirtyStates.add(p);
    }
    this.recheckSeen();
    for (const p of this.unreadParents) this.dirtyChildren.add(p);
    this.unreadParents.clear();
    for (let round = 0; round < 8 && this.dirtyChildren.size > 0; round++) {
      const paths = [...this.dirtyChildren];
      this.dirtyChildren.clear();
      const lists = await Promise.all(paths.map((p) => this.childRefs(p)));
      const unknown: string[] = [];
      const listedBy = new Map<string, string>();
      paths.forEach((p, i) => {
        const node = this.nodes.get(p);
        const list = lists[i];
        if (!node) return;
        if (list === null || list === undefined) {
          this.remove(p); // the object is gone
          return;
        }
        const next = list.filter(([b]) => b === this.appBus).map(([, c]) => c);
        const keep = new Set(next);
        for (const old of node.children) if (!keep.has(old)) this.remove(old);
        node.children = next;
        for (const c of next) {
          const child = this.nodes.get(c);
          if (!child) {
            unknown.push(c);
            listedBy.set(c, p);
          } else child.parent = p;
        }
      });
      const subtrees = await Promise.all(unknown.map((c) => readSubtree(this.bus, this.appBus, c)));
      for (const tree of subtrees) {
        for (const [p, n] of tree) {
          this.nodes.set(p, n);
          this.freshlyRead.set(p, performance.now());
        }
      }
      for (const tree of subtrees) this.noteDangling(tree.values(), this.unreadParents);
      // A listed child that could not be read (replaced mid-read, or the app too busy to answer)
      // leaves its parent's list naming an object the mirror lacks: that list is read again at
      // the next sync. Left alone, a navigation's old document stayed listed, the new one was
      // never looked for, and the page stayed unobservable (measured on Chromium).
      for (const c of unknown) {
        const parent = listedBy.get(c);
        if (!this.nodes.has(c) && parent) this.unreadParents.add(parent);
      }
      this.recheckSeen();
    }
    if (this.dirtyNames.size > 0) {
      const paths = [...this.dirtyNames];
      this.dirtyNames.clear();
      const names = await Promise.all(
        paths.map((p) =>
          this.bus
            .getProperty({ bus: this.appBus, path: p }, IFACE.accessible, 'Name')
            .then(String, () => null),
        ),
      );
      paths.forEach((p, i) => {
        const node = this.nodes.get(p);
        const name = names[i];
        if (node && name) node.name = name;
      });
    }
    if (this.dirtyStates.size > 0) {
      const paths = [...this.dirtyStates];
      this.dirtyStates.clear();
      const states = await Promise.all(
        paths.map((p) =>
          this.bus.call(this.appBus, p, IFACE.accessible, 'GetState').then(
            (b) => b[0] as number[],
            () => null,
          ),
        ),
      );
      paths.forEach((p, i) => {
        const node = this.nodes.get(p);
        const bits = states[i];
        if (node && bits) node.states = statesFromBits(bits);
      });
    }
  }

  /**
   * noteDangling queues for a re-read (into `into`) each of `read` whose child list names an
   * object the mirror lacks. A subtree read skips an object whose calls fail, and its parent's
   * list, read fine, still names it: no count ever disagrees (ChildCount matches that list) and
   * the object's own events name an object the mirror lacks (skipped past UNSEEN_MS), so it
   * stayed missing for good. Measured on Chromium under load (a 2,000-row page read while it
   * loaded, the form's labels at the same depth as the table's rows): the form listed its two
   * labels and its checkbox, none of them was in the mirror, and neither field was ever found.
   */
  private noteDangling(read: Iterable<NodeData>, into: Set<string>): void {
    for (const n of read) if (n.children.some((c) => !this.nodes.has(c))) into.add(n.path);
  }

  /**
   * recheckSeen queues for a re-read the objects that changed while unknown and are now in the
   * mirror (see `unseen`); objects still unknown after UNSEEN_MS belong to no read in flight.
   */
  private recheckSeen(): void {
    const now = performance.now();
    for (const [p, at] of this.unseen) {
      const node = this.nodes.get(p);
      if (node) {
        this.dirtyChildren.add(p);
        this.dirtyStates.add(p);
        if (NAMED_ROLES.has(node.role)) this.dirtyNames.add(p);
        this.unseen.delete(p);
      } else if (now - at > UNSEEN_MS) this.unseen.delete(p);
    }
  }

  /** childRefs lists an object's children; a huge managed set only its visible part. */
  private async childRefs(path: string): Promise<[string, string][] | null> {
    const node = this.nodes.get(path);
    // A managed set not yet known to be huge is counted before it is listed: one GetChildren on
    // a Calc sheet (2^31 cells) hung the app past every timeout. Measured: a sheet announced by
    // Cache.AddAccessible after launch, re-read as a changed object, left every Ping to Calc
    // timing out for 90 s.
    if (node && !node.huge && node.states.includes('manages_descendants')) {
      const count = await this.bus
        .getProperty({ bus: this.appBus, path }, IFACE.accessible, 'ChildCount')
        .then(Number, () => Number.POSITIVE_INFINITY);
      if (count > HUGE_CHILD_COUNT) node.huge = true;
    }
    if (node?.huge)
      return visibleDescendants(this.bus, this.appBus, path, node.ifaces).then(
        (paths) => paths.map((p): [string, string] => [this.appBus, p]),
        () => null,
      );
    return this.bus.call(this.appBus, path, IFACE.accessible, 'GetChildren').then(
      (b) => b[0] as [string, string][],
      () => null,
    );
  }

  /**
   * syncSubtree checks the child count of every container under `root` and re-reads the child
   * lists that disagree, then syncs. GTK3 adds children without any event (GtkBox.pack_start),
   * and layout hints arrive only after the next frame, so before answering about a window the
   * mirror asks: one cheap call per container (tens, not thousands, even for a 2,000-row list).
   * Names, roles and states still come from events. Limit: a container that silently gains one
   * child and loses another (without the removal event GTK always sends) would go unnoticed.
   *
   * `showingOnly` (a lean observe): a subtree with nothing showing is not counted. A lean
   * observe returns none of it, only its size on the row above; an empty Writer's closed menus
   * are most of its 1,933 objects, and counting their containers was most of a lean observe's
   * time (22–63 ms of 30–80 ms on a loaded machine, measured). Once such a subtree shows (a menu
   * opens), the next lean observe counts it. Limit: a child GTK added silently inside a hidden
   * subtree is missing from `hidden_descendants` until then (or an `include_hidden` observe).
   */
  async syncSubtree(root: string, opts: { showingOnly?: boolean } = {}): Promise<void> {
    const containers: NodeData[] = [];
    const isLean = opts.showingOnly === true && this.nodes.get(root)?.states.includes('showing');
    const shown = isLean ? showingSubtrees((p) => this.nodes.get(p), root) : null;
    const stack = [root];
    while (stack.length > 0) {
      const node = this.nodes.get(stack.pop() as string);
      if (!node) continue;
      if (shown && !shown.has(node.path)) continue;
      // A huge managed set (a spreadsheet) has no meaningful count: its visible part is re-read.
      if (node.huge) this.dirtyChildren.add(node.path);
      // A closed menu (items known, none of them showing) is not counted: a lean observe shows
      // only its size, and it is counted again once it opens (its items then show). 22 of the 90
      // containers of an empty Writer were its menus, each counted on every observe. An empty
      // menu still is: nothing known would show when it opens.
      else if (
        shown &&
        node.role === 'menu' &&
        node.children.length > 0 &&
        !node.children.some((c) => shown.has(c))
      )
        continue;
      else if (node.children.length > 0 || CONTAINER_ROLES.has(node.role)) containers.push(node);
      // A web document's own tree announces every child it adds (the browser mirrors the DOM
      // with events); counting its thousands of rows and cells cost 2–4 s per observe at 8,900
      // elements in Chromium. The document itself is counted: it is attached silently.
      if (node.role !== 'document_web') stack.push(...node.children);
      // A navigation swaps the document object under the same parent without changing the
      // count (Chromium announced neither): that parent's list is always re-read, one call.
      else {
        if (node.parent) this.documentHosts.add(node.parent);
        containers.push(...this.hollowIn(node.path, shown));
      }
    }
    // Remembered: when the old document's removal was announced and the new one's arrival was
    // not, no document is left to lead to its parent, and the page stayed unobservable
    // (measured: Chromium at launch, about 1 start in 5 on the evidence page).
    for (const host of this.documentHosts) {
      if (this.nodes.has(host)) this.dirtyChildren.add(host);
      else this.documentHosts.delete(host);
    }
    const quiet = shown ? this.quietDocuments(root, shown) : [];
    // ChildCount first: GetChildren of a 2,000-row list costs the bridge ~200 ms, the count
    // almost nothing. A silent add changes the count; removals always come with an event.
    const [counts, liveStates] = await Promise.all([
      Promise.all(
        containers.map((n) =>
          this.bus
            .getProperty({ bus: this.appBus, path: n.path }, IFACE.accessible, 'ChildCount')
            .then(Number, () => -1),
        ),
      ),
      Promise.all(
        quiet.map((n) =>
          this.bus.call(this.appBus, n.path, IFACE.accessible, 'GetState').then(
            (b) => statesFromBits(b[0] as number[]),
            () => [] as ElementState[],
          ),
        ),
      ),
    ]);
    containers.forEach((n, i) => {
      if (counts[i] !== n.children.length) this.dirtyChildren.add(n.path);
    });
    // A quiet document that Chromium says is showing: every state below it is read again now.
    quiet.forEach((n, i) => {
      if (liveStates[i]?.includes('showing')) this.markStates(n.path);
    });
    // The counts' replies came after every event the app sent before them.
    await this.sync({ isFenced: containers.length > 0 || quiet.length > 0 });
  }

  /**
   * quietDocuments lists the window's web documents (frames' ones too) in which nothing shows in
   * the mirror: the document is not `showing` and nothing below it is, or it is and none of its
   * children is. Chromium never announces `showing` when web content comes on screen (measured:
   * a block moved on screen by script, an iframe read off screen, both listed `showing` by a
   * fresh read and not by the mirror for good), so a page read before Chromium laid it out, or
   * off screen, stayed out of every lean observe once FRESH_MS had passed: issue 35's
   * recording-apps test saw only the browser's own 43 rows of a window titled with its page for
   * 120 s. Each is asked its live state at most once per QUIET_RECHECK_MS (one call); a page
   * whose content truly shows nothing costs that call, one that shows is re-read once.
   */
  private quietDocuments(root: string, shown: Set<string>): NodeData[] {
    const now = performance.now();
    for (const p of this.quietChecked.keys()) if (!this.nodes.has(p)) this.quietChecked.delete(p);
    const out: NodeData[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const node = this.nodes.get(stack.pop() as string);
      if (!node) continue;
      stack.push(...node.children);
      if (node.role !== 'document_web') continue;
      const isQuiet =
        !shown.has(node.path) ||
        (node.children.length > 0 && !node.children.some((c) => shown.has(c)));
      const last = this.quietChecked.get(node.path);
      if (!isQuiet || (last !== undefined && now - last < QUIET_RECHECK_MS)) continue;
      this.quietChecked.set(node.path, now);
      out.push(node);
    }
    return out;
  }

  /**
   * hollowIn lists the web document's elements (shown ones, in a lean observe) that hold text or
   * controls on a page yet have neither children nor a name in the mirror: counted like GTK
   * containers, since the document's events did not fill them. Measured on Chromium under load
   * (a 2,000-row page read in 24 s while it loaded): both of the form's labels stayed empty for
   * good, their text and fields (created late, after the table's rows) never reached the
   * mirror, and the fields could not be found. At most HOLLOW_MAX per observe.
   */
  private hollowIn(document: string, shown: Set<string> | null): NodeData[] {
    const out: NodeData[] = [];
    const stack = [...(this.nodes.get(document)?.children ?? [])];
    while (stack.length > 0 && out.length < HOLLOW_MAX) {
      const node = this.nodes.get(stack.pop() as string);
      if (!node || (shown && !shown.has(node.path))) continue;
      if (node.children.length === 0 && node.name === '' && HOLLOW_ROLES.has(node.role))
        out.push(node);
      else if (node.role !== 'document_web') stack.push(...node.children);
    }
    return out;
  }

  /** ancestors lists a node's ancestors from its parent up to (not including) the app root. */
  ancestors(path: string): NodeData[] {
    const out: NodeData[] = [];
    let p = this.nodes.get(path)?.parent ?? null;
    while (p && p !== APP_ROOT && out.length < 256) {
      const n = this.nodes.get(p);
      if (!n) break;
      out.push(n);
      p = n.parent;
    }
    return out;
  }
}

function kebab(member: string): string {
  return member.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
}

export type { NodeData };

/** MirrorEvent is one event the mirror applied, in arrival order (`seq`). */
export interface MirrorEvent {
  seq: number;
  at: number;
  path: string;
  event: string;
  frame: string | null;
  /** Whether the mirror held the object when the event came (else it was being built or read). */
  known: boolean;
}
