import { z } from 'zod';
import { named } from '../registry.js';
import { DeliveryMode, DurationMs, Pid, Rect, WindowId } from './common.js';
import { ElementState, ElementToken, SnapshotId } from './element.js';
import { RefusalCode } from './refusal-codes.js';
import { ScreenshotId } from './screenshot.js';

/**
 * ActionEffect is what the driver can honestly say about an action:
 * - `confirmed`: delivered, and evidence shows the intended element changed as asked;
 * - `partial`: only `delivery.delivered_count` of `requested_count` units went through;
 * - `unverifiable`: delivered, but nothing could prove or disprove the effect; observe before retrying;
 * - `suspected_noop`: delivered, and what could be read back suggests nothing changed;
 * - `refused`: deliberately not delivered (`error` says why); the only effect that is safe to retry.
 * It is about the action, not the task: a confirmed "Save" click does not mean the file was saved.
 */
export const ActionEffect = named(
  'GuestActionEffect',
  z.enum(['confirmed', 'partial', 'unverifiable', 'suspected_noop', 'refused']),
);
export type ActionEffect = z.infer<typeof ActionEffect>;

/**
 * ActionRoute is the path the input actually took (for a refusal: the route that was chosen
 * before the driver stopped), so a caller can tell an AT-SPI action from real X input:
 * - `accessibility`: AT-SPI Action/EditableText/Value/Selection/Component calls over D-Bus;
 * - `xtest`: XTest fake input, indistinguishable from a real device (moves the real pointer);
 * - `synthetic_events`: XSendEvent to the window; flagged send_event, which some apps ignore;
 * - `window_manager`: EWMH client messages (`_NET_CLOSE_WINDOW`, `_NET_ACTIVE_WINDOW`);
 * - `process`: signals to the window's process (closing a window that ignores the WM).
 */
export const ActionRoute = named(
  'GuestActionRoute',
  z.enum(['accessibility', 'xtest', 'synthetic_events', 'window_manager', 'process']),
);
export type ActionRoute = z.infer<typeof ActionRoute>;

const deliveryFields = {
  mode: DeliveryMode,
  /** True when the request named no delivery_mode and the driver chose `mode` for the element. */
  auto_selected: z.boolean().optional().meta({
    description: 'True when the request named no delivery_mode and the driver chose `mode`.',
  }),
  /** Units the request asked for: characters to type, key presses, clicks of a double click. */
  requested_count: z.int().min(1).optional(),
  delivered_count: z.int().min(0).optional(),
  /** Whether keyboard focus moved during delivery; background delivery promises it does not. */
  focus_changed: z.boolean().optional(),
  /** Whether the real pointer moved; true for every XTest route. */
  pointer_moved: z.boolean().optional(),
};

/** ActionDelivery says how input was delivered; a refusal has none, since nothing was. */
export const ActionDelivery = named('GuestActionDelivery', z.strictObject(deliveryFields));
export type ActionDelivery = z.infer<typeof ActionDelivery>;

/**
 * PartialDelivery is the delivery of a `partial` result: how far it got is mandatory, since the
 * caller has to observe and complete only the rest. At least one unit went through (none would be
 * a refusal) and at least one did not (all would not be partial).
 */
export const PartialDelivery = named(
  'GuestPartialDelivery',
  z
    .strictObject({
      ...deliveryFields,
      requested_count: z.int().min(2),
      delivered_count: z.int().min(1),
    })
    .refine((d) => d.delivered_count < d.requested_count, {
      message: 'a partial delivery delivers fewer units than requested',
      path: ['delivered_count'],
    }),
);
export type PartialDelivery = z.infer<typeof PartialDelivery>;

const evidenceOf = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, shape: S) =>
  z.strictObject({ kind: z.literal(kind), ...shape });

/**
 * ActionEvidence is one observation that ties an effect to the action. Values of secure fields
 * never appear here: for them the driver reads back the character count (`length_readback`).
 */
export const ActionEvidence = named(
  'GuestActionEvidence',
  z.discriminatedUnion('kind', [
    evidenceOf('value_readback', {
      element_token: ElementToken.optional(),
      before: z.string().max(65_536).optional(),
      after: z.string().max(65_536),
    }),
    evidenceOf('length_readback', {
      element_token: ElementToken.optional(),
      before: z.int().min(0).optional(),
      after: z.int().min(0),
    }),
    evidenceOf('state_readback', {
      element_token: ElementToken.optional(),
      state: ElementState,
      before: z.boolean().optional(),
      after: z.boolean(),
    }),
    evidenceOf('name_readback', {
      element_token: ElementToken.optional(),
      before: z.string().max(4096).optional(),
      after: z.string().max(4096),
    }),
    evidenceOf('a11y_event', {
      /** AT-SPI event type as the bus names it, e.g. `object:state-changed:checked`. */
      event: z.string().min(1).max(128),
      element_token: ElementToken.optional(),
      /** The element's role and accessible name when the event arrived (a label's new text). */
      role: z.string().max(64).optional(),
      name: z.string().max(1024).optional(),
      /** Milliseconds after delivery began; events from before delivery are never evidence. */
      after_ms: DurationMs,
    }),
    evidenceOf('window_change', {
      change: z.enum(['opened', 'closed', 'title_changed', 'focused', 'geometry_changed']),
      window_id: WindowId,
      title: z.string().max(4096).optional(),
    }),
    evidenceOf('screenshot_diff', {
      /** Share of pixels of the window that changed, 0–1. */
      changed_ratio: z.number().min(0).max(1),
      /** Bounding box of the change, in screen coordinates. */
      region: Rect.optional(),
    }),
    evidenceOf('process_exit', {
      pid: Pid,
      exit_code: z.int().nullable(),
      signal: z.string().max(16).nullable(),
    }),
  ]),
);
export type ActionEvidence = z.infer<typeof ActionEvidence>;

/**
 * ActionEscalation suggests the next rung of the ladder; the driver never climbs it by itself
 * (a background failure is not permission to take the foreground). Targets: `observe` (take a
 * fresh snapshot and retry with its tokens), `pixel` (use pixel input on the latest screenshot),
 * `foreground` (retry with delivery_mode "foreground"), `human` (stop and ask a person).
 */
export const ActionEscalation = named(
  'GuestActionEscalation',
  z.strictObject({
    target: z.enum(['observe', 'pixel', 'foreground', 'human']),
    reason: z.enum([
      'route_unavailable',
      'delivery_failed',
      'effect_unconfirmed',
      'suspected_noop',
      'permission_required',
      'target_stale',
      'target_ambiguous',
    ]),
    hint: z.string().max(1024).optional(),
  }),
);
export type ActionEscalation = z.infer<typeof ActionEscalation>;

/** ActionError says why an action was refused and what would make it acceptable. */
export const ActionError = named(
  'GuestActionError',
  z.strictObject({ code: RefusalCode, hint: z.string().min(1).max(1024) }),
);
export type ActionError = z.infer<typeof ActionError>;

const common = {
  route: ActionRoute,
  summary: z.string().max(1024).optional(),
  /** Snapshot the targeted element token was resolved against (element actions). */
  snapshot_id: SnapshotId.optional(),
  /** Screenshot the pixel coordinates were measured in (pixel actions). */
  screenshot_id: ScreenshotId.optional(),
  duration_ms: DurationMs,
};
const evidenceList = z.array(ActionEvidence).max(32);
/**
 * Observations are changes seen after an action that do not belong to it (a ticking clock, an
 * animation, another element's update): listed so the caller sees them, never counted as proof.
 */
const observationList = z.array(ActionEvidence).max(32);
// Once anything was delivered a replay may double it (a toggle undone, a payment sent twice).
const delivered = { ...common, retry_safe: z.literal(false) };

/**
 * ActionResult is what every action returns. Its invariants are part of the schema, so a driver
 * cannot send, and a client cannot accept, a result that claims more than was observed:
 * `confirmed` carries at least one evidence item; `partial` carries delivered and requested
 * counts; `refused` carries `error` and neither `delivery` nor `evidence`; `error` appears only
 * on `refused`; `retry_safe` is true exactly when nothing was delivered, i.e. only on `refused`;
 * unknown fields are rejected at every level.
 */
export const ActionResult = named(
  'GuestActionResult',
  z.discriminatedUnion('effect', [
    z.strictObject({
      effect: z.literal('confirmed'),
      ...delivered,
      delivery: ActionDelivery,
      evidence: evidenceList.min(1),
      observations: observationList.optional(),
    }),
    z.strictObject({
      effect: z.literal('partial'),
      ...delivered,
      delivery: PartialDelivery,
      evidence: evidenceList.optional(),
      observations: observationList.optional(),
      escalation: ActionEscalation.optional(),
    }),
    z.strictObject({
      effect: z.literal('unverifiable'),
      ...delivered,
      delivery: ActionDelivery,
      evidence: evidenceList.optional(),
      observations: observationList.optional(),
      escalation: ActionEscalation.optional(),
    }),
    z.strictObject({
      effect: z.literal('suspected_noop'),
      ...delivered,
      delivery: ActionDelivery,
      evidence: evidenceList.optional(),
      observations: observationList.optional(),
      escalation: ActionEscalation.optional(),
    }),
    z.strictObject({
      effect: z.literal('refused'),
      ...common,
      retry_safe: z.literal(true),
      error: ActionError,
      escalation: ActionEscalation.optional(),
    }),
  ]),
);
export type ActionResult = z.infer<typeof ActionResult>;
