import { GuestRoutes } from './routes.js';

/**
 * Valid samples of the driving calls an agent makes first (observe, then an element action), by
 * the schemas of their guest routes. A schema's first parse in a process costs 5-90 ms (zod
 * builds its parsers lazily and V8 compiles them on first use; measured in a guest with its
 * flags, --single-threaded, at load 11-15) and later ones 0.1-0.2 ms. Every first action lands
 * on a fresh desktop whose guest has answered only its priming (launch, verify_state, observe),
 * so its first act.element paid that cost inside the call, after its own `duration_ms`.
 */
const FRAME = { x: 0, y: 0, w: 800, h: 600 };
const STATES = ['enabled', 'sensitive', 'showing', 'visible'];
/** Rows as a browser page's observe answers them (key order included: the parsers' shapes). */
const ELEMENTS = [
  {
    element_token: 's1:0',
    role: 'frame',
    name: 'Page',
    states: STATES,
    actions: ['click', 'scroll_into_view'],
    frame: FRAME,
    depth: 0,
  },
  {
    element_token: 's1:1',
    role: 'panel',
    states: STATES,
    actions: ['click', 'scroll_into_view'],
    frame: FRAME,
    depth: 1,
    parent: 's1:0',
    hidden_descendants: 1,
  },
  {
    element_token: 's1:2',
    role: 'push_button',
    name: 'Back',
    description: 'Go back',
    states: ['showing', 'visible'],
    actions: ['click', 'scroll_into_view'],
    frame: FRAME,
    depth: 2,
    parent: 's1:1',
  },
  {
    element_token: 's1:3',
    role: 'link',
    name: 'Introduction',
    states: [...STATES, 'focusable'],
    actions: ['click', 'focus', 'scroll_into_view'],
    frame: FRAME,
    depth: 2,
    parent: 's1:1',
  },
];

const WARM_SAMPLES = [
  {
    op: 'observe',
    request: { window_id: 1, include_screenshot: false },
    response: {
      snapshot_id: 's1',
      invalidated_snapshot_ids: [],
      window: { window_id: 1, title: 'Page', pid: 2, app: 'chromium' },
      elements: ELEMENTS,
      truncated: false,
      degraded: false,
      duration_ms: 1,
    },
  },
  {
    op: 'act.element',
    request: { window_id: 1, element_token: 's1:0', action: 'click' },
    response: {
      effect: 'confirmed',
      route: 'accessibility',
      snapshot_id: 's1',
      duration_ms: 1,
      delivery: { mode: 'background', focus_changed: false, pointer_moved: false },
      retry_safe: false,
      evidence: [
        { kind: 'a11y_event', event: 'object:property-change:accessible-name', after_ms: 1 },
      ],
      observations: [{ kind: 'window_change', change: 'title_changed', window_id: 1 }],
      summary: 'Clicked.',
    },
  },
  {
    op: 'act.element',
    request: { window_id: 1, element_token: 's1:0', action: 'type_text', text: 'a' },
    response: {
      effect: 'refused',
      route: 'accessibility',
      duration_ms: 1,
      retry_safe: true,
      error: { code: 'stale_element_token', hint: 'Observe again.' },
    },
  },
] as const;

/** The operations warmGuestSchemas has samples of. */
export type WarmOperation = (typeof WARM_SAMPLES)[number]['op'];

/**
 * warmGuestSchemas parses each sample (of `ops`, all by default) with its route's request and
 * response schemas, so the first real call of the process does not build them. Call it when idle
 * (after start); it answers how many samples did not parse (0 unless the contract changed under
 * the samples: a unit test holds it at 0).
 */
export function warmGuestSchemas(
  ops: readonly WarmOperation[] = ['observe', 'act.element'],
): number {
  let failed = 0;
  // Twice, as parsed JSON (the worker's and the API's answers are): the second run is the one
  // the optimizing compiler sees with these shapes.
  for (let i = 0; i < 2; i++)
    for (const s of WARM_SAMPLES) {
      if (!ops.includes(s.op)) continue;
      const route = GuestRoutes[s.op];
      if (!route.request.safeParse(JSON.parse(JSON.stringify(s.request))).success) failed++;
      if (!route.response.safeParse(JSON.parse(JSON.stringify(s.response))).success) failed++;
    }
  return failed;
}
