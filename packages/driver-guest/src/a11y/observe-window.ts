import { AppError } from '@cubicle/contract/errors';
import { OBSERVE_DEFAULT_MAX_DEPTH, OBSERVE_DEFAULT_MAX_ELEMENTS } from '@cubicle/contract/guest';
import type {
  DegradedReason,
  ElementRow,
  ObserveRequest,
  ObserveResponse,
  ScreenshotImage,
  TruncationReason,
} from '@cubicle/contract/guest';
import type { A11yDesktop } from './a11y-desktop.js';
import type { AppMirror } from './app-mirror.js';
import { actionsFor, isSecure } from './atspi-constants.js';
import { fingerprintOf } from './fingerprint.js';
import { walkWindow } from './lean-tree.js';
import { APP_ROOT, type NodeData } from './read-node.js';
import { readValues } from './read-values.js';
import { pokePage } from './flush-page.js';
import { carryTokens, diffRows } from './observe-diff.js';
import type { Snapshot } from './snapshot-store.js';

/** CaptureWindow takes a screenshot of one window; the screen module provides it. */
export type CaptureWindow = (windowId: number, maxDimension: number) => Promise<ScreenshotImage>;

type Rect = { x: number; y: number; w: number; h: number };

/**
 * observeWindow answers `get_window_state` from the app's live mirror: one fence and the dirty
 * child lists, then values and extents of the returned rows only (pipelined). It records a new
 * snapshot, which invalidates the window's older ones; with `since` it answers a diff against
 * that snapshot instead (see ObserveDiff), which must be the window's latest (else 422
 * `stale_snapshot`). Returns null for an unknown window.
 */
export async function observeWindow(
  desktop: A11yDesktop,
  req: ObserveRequest,
  capture?: CaptureWindow,
): Promise<ObserveResponse | null> {
  const started = performance.now();
  // A filter is a search: it looks through hidden subtrees too (its answer is already small).
  const isWhole = req.include_hidden || req.query !== undefined || req.roles !== undefined;
  const bound = await desktop.bindWindow(req.window_id, { showingOnly: !isWhole });
  if (bound.kind === 'window_not_found') return null;
  const base = req.since === undefined ? undefined : baseOf(desktop, req.window_id, req.since);
  const degraded = new Set<DegradedReason>();
  const details: string[] = [];
  if (bound.kind === 'not_accessible') {
    const { snapshot, invalidated } = desktop.snapshots.create(req.window_id, '', base);
    desktop.snapshots.finish(snapshot);
    return {
      snapshot_id: snapshot.id,
      invalidated_snapshot_ids: invalidated,
      window: {
        window_id: req.window_id,
        title: bound.props.title,
        pid: bound.props.pid,
        app: null,
      },
      elements: [],
      ...(base ? { diff: diffRows(base.id, base.rows, []) } : {}),
      truncated: false,
      degraded: { reasons: ['app_not_accessible'], detail: bound.detail.slice(0, 1024) },
      duration_ms: performance.now() - started,
    };
  }
  const { mirror, frame, props } = bound.binding;

  const keepsStatic = req.roles?.includes('static') ?? false;
  const { entries: inDepth, depthCut } = walkWindow((p) => mirror.nodes.get(p), frame.path, {
    maxDepth: req.max_depth,
    includeHidden: isWhole,
    skip: (child, parent) => !keepsStatic && isEchoedText(child, parent),
  });
  // A page that renders no frames keeps its changes until asked (flush-page.ts): ask now, without
  // waiting, so what it held arrives outside any action's window and its busy elements show so.
  const page = inDepth.find((e) => e.node.role === 'document_web');
  if (page) void pokePage(mirror, page.node.path, { idle: true });

  const readingValues = readValues(
    desktop.bus,
    mirror.appBus,
    inDepth.map((e) => e.node),
  );
  const query = req.query?.toLowerCase();
  const roles = req.roles ? new Set(req.roles) : null;
  // A query matches values too, so its rows wait for them; without one the rows do not depend
  // on their values, and their frames are read while the values are (one round trip less).
  const queried = query ? await readingValues : null;
  const matching = inDepth.filter(({ node }) => {
    if (roles && !roles.has(node.role)) return false;
    if (!query) return true;
    const v = queried?.get(node.path);
    const value = v?.kind === 'value' ? v.value : '';
    return [node.name, node.description, value].some((s) => s.toLowerCase().includes(query));
  });
  const returned = matching.slice(0, req.max_elements);
  const truncation: TruncationReason[] = [];
  if (matching.length > returned.length) truncation.push('max_elements');
  if (depthCut) truncation.push('max_depth');

  const [values, extents] = await Promise.all([
    readingValues,
    readFrames(
      desktop,
      mirror,
      frame.path,
      returned.map((r) => r.node),
    ),
  ]);

  let screenshot: ScreenshotImage | undefined;
  if (req.include_screenshot) {
    if (!capture) {
      degraded.add('screenshot_unavailable');
      details.push('this driver build has no screenshot capture wired into observe');
    } else {
      try {
        screenshot = await capture(req.window_id, req.max_dimension);
      } catch (err) {
        degraded.add('screenshot_unavailable');
        details.push(`screenshot failed: ${(err as Error).message}`);
      }
    }
  }
  if (!frame.states.includes('showing')) degraded.add('window_not_visible');

  const rowIndex = new Map<string, number>();
  const elements: ElementRow[] = [];
  // Another observe of the window may have landed while this one read: then it is the base.
  if (req.since !== undefined) baseOf(desktop, req.window_id, req.since);
  // Snapshot id first, so tokens can be formatted while rows are built.
  const { snapshot, invalidated } = desktop.snapshots.create(req.window_id, frame.path, base);
  const ancestorsOf = returned.map(({ node }) => mirror.ancestors(node.path));
  const identities = returned.map(({ node }, n) => ({
    ref: { bus: mirror.appBus, path: node.path },
    fingerprint: fingerprintOf(node, ancestorsOf[n] ?? []),
  }));
  const tokens = carryTokens(base, snapshot.id, identities);
  returned.forEach(({ node, depth, hidden }, n) => {
    rowIndex.set(node.path, n);
    const ancestors = ancestorsOf[n] ?? [];
    // The nearest returned ancestor: usually the parent itself, so stop at the first found.
    let parentRow: number | undefined;
    for (const a of ancestors) if ((parentRow = rowIndex.get(a.path)) !== undefined) break;
    const frameRect = extents[n] ?? undefined;
    const v = values.get(node.path);
    const row = {
      element_token: tokens[n] as string,
      role: node.role,
      ...(node.name ? { name: node.name.slice(0, 4096) } : {}),
      ...(node.description ? { description: node.description.slice(0, 4096) } : {}),
      states: node.states,
      actions: actionsFor(node.role, node.ifaces, node.states),
      ...(frameRect ? { frame: frameRect } : {}),
      ...(frameRect && screenshot ? toScreenshotFrame(frameRect, screenshot) : {}),
      depth,
      ...(parentRow !== undefined ? { parent: tokens[parentRow] as string } : {}),
      ...(v?.kind === 'unreadable' ? { unreadable: ['value' as const] } : {}),
      ...(hidden ? { hidden_descendants: hidden } : {}),
    };
    if (v?.kind === 'unreadable') degraded.add('properties_unreadable');
    const element: ElementRow = isSecure(node.role)
      ? { ...row, redacted: true }
      : { ...row, ...(v?.kind === 'value' ? { value: v.value.slice(0, 65_536) } : {}) };
    elements.push(element);
    snapshot.add({
      ...(identities[n] as (typeof identities)[number]),
      token: row.element_token,
      row: element,
    });
  });
  desktop.snapshots.finish(snapshot);

  const appName = mirror.nodes.get(APP_ROOT)?.name || null;
  return {
    snapshot_id: snapshot.id,
    invalidated_snapshot_ids: invalidated,
    window: {
      window_id: req.window_id,
      title: props.title.slice(0, 4096),
      pid: props.pid,
      app: appName ? appName.slice(0, 256) : null,
    },
    ...(base ? { elements: [], diff: diffRows(base.id, base.rows, elements) } : { elements }),
    truncated:
      truncation.length > 0
        ? {
            reasons: truncation,
            ...(matching.length > returned.length
              ? { omitted_count: matching.length - returned.length }
              : {}),
          }
        : false,
    degraded:
      degraded.size > 0
        ? {
            reasons: [...degraded],
            ...(details.length > 0 ? { detail: details.join('; ').slice(0, 1024) } : {}),
          }
        : false,
    ...(screenshot ? { screenshot } : {}),
    duration_ms: performance.now() - started,
  };
}

/**
 * baseOf finds the snapshot a diff is asked against; it must be the window's latest, the one
 * view of the window the agent holds tokens of (422 `stale_snapshot` otherwise).
 */
function baseOf(desktop: A11yDesktop, windowId: number, since: string): Snapshot {
  const check = desktop.snapshots.checkBase(windowId, since);
  if (check.kind === 'ok') return check.snapshot;
  const why = {
    unknown: 'was not issued by this driver (or is long gone)',
    replaced: 'was replaced by a newer observe of this window',
    other_window: 'belongs to another window',
  }[check.kind];
  throw new AppError(
    'stale_snapshot',
    `Snapshot ${since} ${why}: a diff is only against the window's latest snapshot; observe without since.`,
    { reason: check.kind },
  );
}

/**
 * isEchoedText: a text leaf that only repeats its parent's name. Chromium exposes every DOM text
 * run as a `static` object, so each table cell "Row 5" has a child "Row 5" (and a link its own
 * label): 2,000 rows of the web fixture gave 10,249 rows, past the 10,000 cap, before a single
 * "Delete" button was missing. The leaf adds no name, no action and no state an agent needs, and
 * Firefox exposes no such leaves at all, so observe leaves it out unless `static` is asked for by
 * role. A text leaf with its own words (a paragraph's, whose name is empty) is kept.
 */
export function isEchoedText(node: NodeData, parent: NodeData): boolean {
  return (
    node.role === 'static' &&
    node.children.length === 0 &&
    node.name !== '' &&
    node.name === parent.name
  );
}

/**
 * readFrames gives each row its screen rectangle: the frame's position is read live (windows
 * move without telling AT-SPI), the rest comes from the mirror's frame-relative extent cache and
 * only objects missing from it are asked (pipelined).
 */
async function readFrames(
  desktop: A11yDesktop,
  mirror: AppMirror,
  framePath: string,
  nodes: readonly NodeData[],
): Promise<(Rect | null)[]> {
  const origin = await desktop.extentsOf(mirror.appBus, framePath);
  if (!origin) return nodes.map(() => null);
  return Promise.all(
    nodes.map(async (node) => {
      if (node.path === framePath) return origin;
      if (!node.ifaces.has('org.a11y.atspi.Component')) return null;
      let rel = mirror.extents.get(node.path);
      if (!rel) {
        const abs = await desktop.extentsOf(mirror.appBus, node.path);
        if (!abs) return null;
        rel = { x: abs.x - origin.x, y: abs.y - origin.y, w: abs.w, h: abs.h };
        mirror.extents.set(node.path, rel);
      }
      // GTK answers -1 sizes for a widget it never laid out (xfce4-terminal's hidden menu
      // items): that is no rectangle at all, not one to report.
      if (rel.w < 0 || rel.h < 0) return null;
      return { x: origin.x + rel.x, y: origin.y + rel.y, w: rel.w, h: rel.h };
    }),
  );
}

/** Extents read at once by warmFrames: an observe arriving meanwhile waits behind one batch. */
const WARM_BATCH = 64;

/**
 * warmFrames reads, in the background, the extents a default observe of the window would ask for
 * and the cache lacks, a batch at a time. A window waited for by verify_state (a pool's priming:
 * "until the link shows") is usually observed next, and its first observe asked every row's
 * extents: 177 GetExtents on the libxslt index page, 35-110 ms of a 70-410 ms observe on
 * Chromium at load ~10 (measured). The cache keeps them valid as observe's own reads (bounds
 * events drop what moved). Never throws.
 */
export async function warmFrames(
  desktop: A11yDesktop,
  mirror: AppMirror,
  framePath: string,
): Promise<void> {
  const get = (p: string) => mirror.nodes.get(p);
  const { entries } = walkWindow(get, framePath, {
    maxDepth: OBSERVE_DEFAULT_MAX_DEPTH,
    includeHidden: false,
    skip: (child, parent) => isEchoedText(child, parent),
  });
  const missing = entries
    .slice(0, OBSERVE_DEFAULT_MAX_ELEMENTS)
    .map((e) => e.node)
    .filter(
      (n) =>
        n.path !== framePath &&
        n.ifaces.has('org.a11y.atspi.Component') &&
        !mirror.extents.get(n.path),
    );
  if (missing.length === 0) return;
  const origin = await desktop.extentsOf(mirror.appBus, framePath);
  if (!origin) return;
  for (let i = 0; i < missing.length; i += WARM_BATCH) {
    await Promise.all(
      missing.slice(i, i + WARM_BATCH).map(async (node) => {
        if (mirror.extents.get(node.path) || !mirror.nodes.has(node.path)) return;
        const abs = await desktop.extentsOf(mirror.appBus, node.path);
        if (!abs) return;
        mirror.extents.set(node.path, {
          x: abs.x - origin.x,
          y: abs.y - origin.y,
          w: abs.w,
          h: abs.h,
        });
      }),
    );
  }
}

/** toScreenshotFrame maps a screen rectangle into the screenshot's pixels; omitted when off-image. */
function toScreenshotFrame(r: Rect, shot: ScreenshotImage): { screenshot_frame?: Rect } {
  const x = Math.round((r.x - shot.origin.x) * shot.scale);
  const y = Math.round((r.y - shot.origin.y) * shot.scale);
  const w = Math.round(r.w * shot.scale);
  const h = Math.round(r.h * shot.scale);
  if (x + w <= 0 || y + h <= 0 || x >= shot.width || y >= shot.height) return {};
  return { screenshot_frame: { x, y, w, h } };
}
