import type dbus from 'dbus-next';
import { AppMirror } from './app-mirror.js';
import { AtspiBus } from './atspi-bus.js';
import { APP_ROOT, type NodeData } from './read-node.js';
import { SnapshotStore } from './snapshot-store.js';
import { readWindowProps, type WindowProps } from './window-props.js';

type Message = InstanceType<typeof dbus.Message>;

const FRAME_ROLES = new Set([
  'frame',
  'window',
  'dialog',
  'alert',
  'file_chooser',
  'color_chooser',
  'font_chooser',
]);

/**
 * boundBefore returns the frame the window was bound to last time (`known`) while it still is
 * that window's, in a mirror synced for this call: the app's mirror still lists it as a top-level
 * and it bears the window's title. That skips asking the registry for every app (and the pid of
 * new ones) on each observe; a title that moved (a navigation not yet in both) falls back to the
 * search.
 */
function boundBefore(
  known: { framePath: string },
  mirror: AppMirror,
  props: WindowProps,
): NodeData | null {
  const frame = mirror.nodes.get(known.framePath);
  const isTopLevel = mirror.nodes.get(APP_ROOT)?.children.includes(known.framePath) ?? false;
  return frame && isTopLevel && frame.name === props.title ? frame : null;
}

/** WindowBinding is an X11 window found in the accessibility tree. */
export interface WindowBinding {
  props: WindowProps;
  mirror: AppMirror;
  frame: NodeData;
}

export type BindResult =
  | { kind: 'ok'; binding: WindowBinding }
  | { kind: 'window_not_found' }
  | { kind: 'not_accessible'; props: WindowProps; detail: string };

/** LookupWindow reads an X11 window's title, pid and client geometry; null when it is gone. */
export type LookupWindow = (windowId: number) => Promise<WindowProps | null>;

export interface A11yDesktopOptions {
  display: string;
  sessionBusAddress: string;
  /** How to read X11 window facts; xprop/xwininfo when not given. */
  lookupWindow?: LookupWindow;
}

/**
 * A11yDesktop is the accessibility side of one desktop session: one a11y bus connection, a live
 * mirror per application that has been observed, and the snapshot store. Signals are routed by
 * sender to the app's mirror as they arrive, so the mirrors stay current between calls.
 */
export class A11yDesktop {
  readonly snapshots = new SnapshotStore();
  private readonly mirrors = new Map<string, Promise<AppMirror>>();
  private readonly pids = new Map<string, number>();
  /** The frame each X11 window was last bound to, to skip the search while it still holds. */
  private readonly frames = new Map<number, { appBus: string; framePath: string; pid: number }>();

  private constructor(
    readonly bus: AtspiBus,
    readonly display: string,
    readonly lookupWindow: LookupWindow,
  ) {
    bus.onSignal((msg) => this.route(msg));
  }

  static async connect(options: A11yDesktopOptions): Promise<A11yDesktop> {
    const lookup = options.lookupWindow ?? ((id: number) => readWindowProps(options.display, id));
    return new A11yDesktop(
      await AtspiBus.connect(options.sessionBusAddress),
      options.display,
      lookup,
    );
  }

  private route(msg: Message): void {
    if (msg.interface === 'org.freedesktop.DBus' && msg.member === 'NameOwnerChanged') {
      const [name, , newOwner] = msg.body as [string, string, string];
      if (newOwner === '' && name.startsWith(':')) {
        this.mirrors.delete(name);
        this.pids.delete(name);
      }
      return;
    }
    const pending = this.mirrors.get(msg.sender);
    // Events that arrive while the seed is read are applied after it, in order; applying an
    // event the seed already reflects changes nothing (set name, drop a removed object).
    if (pending)
      void pending.then(
        (m) => m.apply(msg),
        () => undefined,
      );
  }

  /** mirrorOf returns the app's mirror, seeding it on first use. */
  mirrorOf(appBus: string): Promise<AppMirror> {
    let pending = this.mirrors.get(appBus);
    if (!pending) {
      const mirror = new AppMirror(this.bus, appBus);
      pending = mirror.seed().then(() => mirror);
      pending.catch(() => this.mirrors.delete(appBus));
      this.mirrors.set(appBus, pending);
    }
    return pending;
  }

  /**
   * bindWindow finds the frame accessible of an X11 window: the app whose bus connection belongs
   * to the window's pid, then its top-level with the window's title; several candidates are told
   * apart by their screen extents. `showingOnly`: the caller reads only what is showing (a lean
   * observe), so hidden subtrees are checked at their top only (AppMirror.syncSubtree).
   */
  async bindWindow(windowId: number, opts: { showingOnly?: boolean } = {}): Promise<BindResult> {
    // A window bound before is synced while its X11 facts are read: one wait, not three in a
    // row (the X11 lookup, a fence, then the containers' counts and a fence again). Measured on
    // an empty Writer at load ~11 (a diff observe after typing a word, 22-49 ms): the lookup
    // took 0.4-7 ms, the fence 0.5-11 ms, the counts 10-25 ms.
    const known = this.frames.get(windowId);
    const mirror = known ? await this.existingMirror(known.appBus) : null;
    const syncing = known && mirror ? mirror.syncSubtree(known.framePath, opts) : null;
    syncing?.catch(() => undefined); // awaited below, or left: never an unhandled rejection
    const props = await this.lookupWindow(windowId);
    if (!props) return { kind: 'window_not_found' };
    if (props.pid === null)
      return { kind: 'not_accessible', props, detail: 'the window has no _NET_WM_PID' };
    if (known && mirror && known.pid === props.pid) {
      // The app's failure to answer is this window's (an AtspiTimeoutError: observe again).
      await syncing;
      const again = boundBefore(known, mirror, props);
      if (again) return this.recordBinding(windowId, props, mirror, again);
    }
    const apps = await this.bus.apps().catch(() => []);
    const candidates: { mirror: AppMirror; frame: NodeData }[] = [];
    for (const app of apps) {
      let pid = this.pids.get(app.bus);
      if (pid === undefined) {
        pid = await this.bus.pidOf(app.bus).catch(() => -1);
        this.pids.set(app.bus, pid);
      }
      if (pid !== props.pid) continue;
      const mirror = await this.mirrorOf(app.bus);
      await mirror.sync();
      const root = mirror.nodes.get(APP_ROOT);
      for (const path of root?.children ?? []) {
        const frame = mirror.nodes.get(path);
        if (frame && FRAME_ROLES.has(frame.role)) candidates.push({ mirror, frame });
      }
    }
    if (candidates.length === 0) {
      return {
        kind: 'not_accessible',
        props,
        detail: `no accessible application for pid ${props.pid}`,
      };
    }
    const titled = candidates.filter((c) => c.frame.name === props.title);
    let pool = titled.length > 0 ? titled : candidates;
    if (pool.length > 1 && props.geometry) {
      const g = props.geometry;
      const extents = await Promise.all(
        pool.map((c) => this.extentsOf(c.mirror.appBus, c.frame.path)),
      );
      const near = pool.filter((_, i) => {
        const e = extents[i];
        return (
          e !== null &&
          e !== undefined &&
          Math.abs(e.x - g.x) <= 2 &&
          Math.abs(e.y - g.y) <= 2 &&
          Math.abs(e.w - g.w) <= 2
        );
      });
      if (near.length > 0) pool = near;
    }
    const chosen = pool[0];
    if (!chosen) return { kind: 'not_accessible', props, detail: 'no frame matches the window' };
    return this.finishBinding(windowId, props, chosen, opts);
  }

  private async finishBinding(
    windowId: number,
    props: WindowProps,
    chosen: { mirror: AppMirror; frame: NodeData },
    opts: { showingOnly?: boolean },
  ): Promise<BindResult> {
    await chosen.mirror.syncSubtree(chosen.frame.path, opts);
    const frame = chosen.mirror.nodes.get(chosen.frame.path);
    if (!frame) {
      this.frames.delete(windowId);
      return { kind: 'not_accessible', props, detail: 'the window closed while it was read' };
    }
    return this.recordBinding(windowId, props, chosen.mirror, frame);
  }

  /** recordBinding remembers a window's frame for the next call (see boundBefore). */
  private recordBinding(
    windowId: number,
    props: WindowProps,
    mirror: AppMirror,
    frame: NodeData,
  ): BindResult {
    if (props.pid !== null)
      this.frames.set(windowId, { appBus: mirror.appBus, framePath: frame.path, pid: props.pid });
    return { kind: 'ok', binding: { props, mirror, frame } };
  }

  /** extentsOf reads one object's screen extents; null when it has no Component. */
  async extentsOf(
    appBus: string,
    path: string,
  ): Promise<{ x: number; y: number; w: number; h: number } | null> {
    try {
      const [r] = await this.bus.call(
        appBus,
        path,
        'org.a11y.atspi.Component',
        'GetExtents',
        'u',
        [0],
      );
      const [x, y, w, h] = r as [number, number, number, number];
      return { x, y, w, h };
    } catch {
      return null;
    }
  }

  /** mirrorIfSeeded returns an app's mirror only when it is already live (no seeding). */
  async existingMirror(appBus: string): Promise<AppMirror | null> {
    const pending = this.mirrors.get(appBus);
    return pending ? pending.catch(() => null) : null;
  }

  close(): void {
    this.bus.close();
  }
}
