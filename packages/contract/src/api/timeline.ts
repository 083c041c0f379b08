import { z } from 'zod';
import { ActionEffect } from '../guest/action-result.js';
import { ScreenshotId } from '../guest/screenshot.js';
import { named } from '../registry.js';
import { ClaimId, HandoffId, OpaqueCursor, RunId, Timestamp, ViewerTicketId } from './common.js';
import { ActionRecordId } from './action-record.js';
import { RecordingGap } from './recording.js';
import { ViewerMode } from './viewer-ticket.js';

/** TIMELINE_MAX_LIMIT bounds one page of a claim's timeline (entries, not bytes). */
export const TIMELINE_MAX_LIMIT = 1000;
/** A run's output line is cut to this many characters in the timeline (the run keeps it all). */
export const TIMELINE_MAX_TEXT = 2000;

const entry = <K extends string, S extends z.core.$ZodLooseShape>(kind: K, shape: S) =>
  z.strictObject({
    kind: z.literal(kind),
    /** Unique within the claim's timeline (`<kind>:<source id>`), stable across pages. */
    key: z.string().min(1).max(200),
    /** When it happened, on the claim's wall clock (the API's clock, like every timestamp). */
    at: Timestamp,
    /** Milliseconds from the timeline's `origin` (the video's time of this entry). */
    offset_ms: z.int(),
    ...shape,
  });

/**
 * TimelineElement is the element an action aimed at, when the request or its evidence named it:
 * role and accessible name, as the guest read them (never a typed value).
 */
export const TimelineElement = named(
  'TimelineElement',
  z.strictObject({ role: z.string().max(64).nullable(), name: z.string().max(1024).nullable() }),
);
export type TimelineElement = z.infer<typeof TimelineElement>;

/**
 * TimelineEntry is one thing that happened to a claim, on one clock, so a player can put it beside
 * the video: a driving call with its verified effect (`action`), a launched window, a run's start,
 * output lines and end, a viewer's connection, a handoff's steps, egress denials, and the claim's
 * own lifecycle. Text that may hold secrets is already redacted like run events (`[secret:NAME]`);
 * typed text and set values never appear (`[redacted]`, as stored with the action).
 */
export const TimelineEntry = named(
  'TimelineEntry',
  z.discriminatedUnion('kind', [
    entry('action', {
      action_id: ActionRecordId,
      /** The guest operation (`act.element`, `act.pixel`, `windows.close`). */
      operation: z.string(),
      /** The element action or input (`click`, `type`, `set_value`, `key`, …), when it had one. */
      action: z.string().nullable(),
      effect: ActionEffect,
      /** One line per evidence item (`value_readback: "" → "hello"`, `window_change: opened`). */
      evidence: z.array(z.string().max(600)).max(32),
      /** The guest's own one-line summary of the result, when it gave one. */
      summary: z.string().max(1024).nullable(),
      element: TimelineElement.nullable(),
      /** A refusal's error code. */
      error_code: z.string().nullable(),
      duration_ms: z.int().min(0),
      /**
       * The screenshot a pixel action was measured in (its before frame), kept with the claim:
       * `GET /v1/claims/{id}/screenshots/{screenshot_id}`. Null when none was kept (claims
       * holding secrets keep no screenshots).
       */
      before_screenshot_id: ScreenshotId.nullable(),
    }),
    entry('window', {
      event: z.enum(['launched', 'launch_failed']),
      /** What was launched (the request's app or command name), when it is not a secret. */
      app: z.string().max(200).nullable(),
    }),
    entry('run_started', {
      run_id: RunId,
      argv: z.array(z.string()),
    }),
    entry('run_output', {
      run_id: RunId,
      stream: z.enum(['stdout', 'stderr']),
      /** The output as the run's events hold it: secret values already `[secret:NAME]`. */
      text: z.string().max(TIMELINE_MAX_TEXT + 1),
      is_truncated: z.boolean(),
    }),
    entry('run_ended', {
      run_id: RunId,
      status: z.string(),
      exit_code: z.int().nullable(),
      end_reason: z.string().nullable(),
    }),
    entry('viewer', {
      event: z.enum(['connected', 'disconnected']),
      ticket_id: ViewerTicketId,
      mode: ViewerMode,
      close_reason: z.string().max(64).nullable(),
    }),
    entry('handoff', {
      event: z.enum(['requested', 'taken', 'ended']),
      handoff_id: HandoffId,
      reason: z.string().max(1000),
      /** The handoff's state once ended (`returned`, `expired`, `ended`). */
      state: z.string().nullable(),
    }),
    entry('egress_denied', {
      protocol: z.string(),
      name: z.string(),
      ip: z.string(),
      port: z.int(),
      rule: z.string(),
      count: z.int().min(1),
    }),
    entry('claim', {
      event: z.enum(['claimed', 'activated', 'paused', 'resumed', 'released']),
      /** The release reason, for `released`. */
      reason: z.string().nullable(),
    }),
  ]),
);
export type TimelineEntry = z.infer<typeof TimelineEntry>;
export type TimelineEntryKind = TimelineEntry['kind'];

export const TimelineQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(TIMELINE_MAX_LIMIT).default(500),
  /** The previous page's `next_cursor`: the timeline resumes after its last entry. */
  cursor: OpaqueCursor.optional(),
});
export type TimelineQuery = z.infer<typeof TimelineQuery>;

/**
 * ClaimTimeline is one page of a claim's timeline, oldest first. `origin` is the instant the video
 * starts (the recording's start when the claim records, else when the claim got its desktop, else
 * when it was made): an entry's `offset_ms` is its position in the video.
 */
export const ClaimTimeline = named(
  'ClaimTimeline',
  z.strictObject({
    claim_id: ClaimId,
    origin: Timestamp,
    /** The claim is still active: later pages (and later calls) may bring more entries. */
    is_live: z.boolean(),
    data: z.array(TimelineEntry),
    /**
     * The recording's spans without frames (every gap so far, on every page; empty when the claim
     * does not record), on the same axis as `offset_ms`: an entry inside one happened while the
     * video held a still picture.
     */
    gaps: z.array(RecordingGap),
    next_cursor: z.string().nullable(),
  }),
);
export type ClaimTimeline = z.infer<typeof ClaimTimeline>;
