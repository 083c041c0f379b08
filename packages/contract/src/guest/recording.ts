import { z } from 'zod';
import { named } from '../registry.js';
import { ActionResult } from './action-result.js';
import { DeliveryMode, GUEST_PROTOCOL_VERSION, Timestamp, WindowId } from './common.js';
import { ElementToken } from './element.js';
import { ElementActionRequest } from './element-action.js';
import { PixelActionRequest, PixelPoint } from './pixel-action.js';
import { ScreenshotId } from './screenshot.js';
import { WindowCloseRequest } from './windows.js';

/** RECORDING_JSONL_FILE is the trajectory's name inside the downloaded archive. */
export const RECORDING_JSONL_FILE = 'trajectory.jsonl';

export const RecordingId = named(
  'GuestRecordingId',
  z.string().regex(/^rec_[0-9a-zA-Z]{1,32}$/, 'recording ids look like rec_<id>'),
);
export type RecordingId = z.infer<typeof RecordingId>;

/**
 * RecordingFrameName is a screenshot file inside the archive, named by entry and moment so the
 * files sort in trajectory order: `000042-before.png`.
 */
export const RecordingFrameName = named(
  'GuestRecordingFrameName',
  z.string().regex(/^[0-9]{6}-(before|after)\.png$/, 'NNNNNN-before.png or NNNNNN-after.png'),
);
export type RecordingFrameName = z.infer<typeof RecordingFrameName>;

/** RecordingStartRequest starts the session's trajectory; starting twice is 409 `conflict`. */
export const RecordingStartRequest = named(
  'GuestRecordingStartRequest',
  z.strictObject({
    /** Capture a screenshot of the acted-on window before and after each action. */
    screenshots: z.boolean().default(true),
  }),
);
export type RecordingStartRequest = z.infer<typeof RecordingStartRequest>;

/** RecordingStatus answers start and stop. */
export const RecordingStatus = named(
  'GuestRecordingStatus',
  z.strictObject({
    recording_id: RecordingId,
    active: z.boolean(),
    started_at: Timestamp,
    stopped_at: Timestamp.optional(),
    entry_count: z.int().min(0),
  }),
);
export type RecordingStatus = z.infer<typeof RecordingStatus>;

/**
 * RedactedTypingRequest is a recorded typing request (element `type_text`, pixel `type`) whose
 * text was emptied. The live schemas require at least one character, so the emptied form is its
 * own shape; everything but the text stays as it was sent.
 */
export const RedactedTypingRequest = named(
  'GuestRedactedTypingRequest',
  z.strictObject({
    action: z.enum(['type_text', 'type']),
    window_id: WindowId,
    element_token: ElementToken.optional(),
    screenshot_id: ScreenshotId.optional(),
    delivery_mode: DeliveryMode.optional(),
    focus_at: PixelPoint.optional(),
    text: z.literal(''),
  }),
);
export type RedactedTypingRequest = z.infer<typeof RedactedTypingRequest>;

/** RecordedAction is the request that produced an entry, tagged by the endpoint it came to. */
export const RecordedAction = named(
  'GuestRecordedAction',
  z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('element'),
      request: z.union([ElementActionRequest, RedactedTypingRequest]),
    }),
    z.strictObject({
      kind: z.literal('pixel'),
      request: z.union([PixelActionRequest, RedactedTypingRequest]),
    }),
    z.strictObject({ kind: z.literal('window_close'), request: WindowCloseRequest }),
  ]),
);
export type RecordedAction = z.infer<typeof RecordedAction>;

/**
 * RecordingEntry is one action of the trajectory. Text aimed at a secure field is never stored:
 * the driver empties `value` or `text` in the recorded request and lists the field in `redacted`,
 * so a reader can tell an emptied secret from a real empty string.
 */
export const RecordingEntry = named(
  'GuestRecordingEntry',
  z.strictObject({
    type: z.literal('action'),
    /** 1-based position in the trajectory; also the number in the frame file names. */
    seq: z.int().min(1).max(999_999),
    at: Timestamp,
    window_id: WindowId,
    action: RecordedAction,
    redacted: z
      .array(z.enum(['value', 'text']))
      .min(1)
      .optional(),
    before_screenshot: RecordingFrameName.optional(),
    after_screenshot: RecordingFrameName.optional(),
    result: ActionResult,
  }),
);
export type RecordingEntry = z.infer<typeof RecordingEntry>;

/** RecordingHeader is the first line of a trajectory, so an archive describes itself. */
export const RecordingHeader = named(
  'GuestRecordingHeader',
  z.strictObject({
    type: z.literal('recording'),
    recording_id: RecordingId,
    protocol_version: z.literal(GUEST_PROTOCOL_VERSION),
    started_at: Timestamp,
  }),
);
export type RecordingHeader = z.infer<typeof RecordingHeader>;

/** RecordingLine is any line of `trajectory.jsonl`: one header, then entries in order. */
export const RecordingLine = named(
  'GuestRecordingLine',
  z.discriminatedUnion('type', [RecordingHeader, RecordingEntry]),
);
export type RecordingLine = z.infer<typeof RecordingLine>;
