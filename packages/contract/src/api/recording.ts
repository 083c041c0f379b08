import { z } from 'zod';
import { named } from '../registry.js';
import { ClaimId, Timestamp } from './common.js';

/**
 * RecordingQuality trades bytes for sharpness (H.264 CRF 34 / 28 / 23 at x264 `veryfast`).
 * Text stays readable at `medium`; `low` is for long runs watched for what happened, not detail.
 */
export const RecordingQuality = named('RecordingQuality', z.enum(['low', 'medium', 'high']));
export type RecordingQuality = z.infer<typeof RecordingQuality>;

/** RECORDING_DEFAULT_FPS: five frames a second shows every step of an agent and costs little. */
export const RECORDING_DEFAULT_FPS = 5;

const Fps = z.number().int().min(1).max(15);

/**
 * RecordingOptions is a claim's `recording`: video of the desktop's screen, encoded beside the
 * desktop (H.264 in fragmented MP4) and uploaded in segments of a few seconds while the claim
 * runs. `fps` and `quality` left out take the pool's. A claim may ask for it only when its pool
 * offers recording (`pool.recording` not null; else 409 `recording_not_allowed`), and may turn it
 * off (`video: false`) when the pool records by default.
 */
export const RecordingOptions = named(
  'RecordingOptions',
  z.strictObject({
    video: z.boolean(),
    fps: Fps.optional(),
    quality: RecordingQuality.optional(),
  }),
);
export type RecordingOptions = z.infer<typeof RecordingOptions>;

/**
 * PoolRecording is a pool's `recording`: null (the default) offers none; an object offers it,
 * with `video: true` recording every claim unless the claim turns it off, and `video: false`
 * recording only claims that ask (`recording: {video: true}`). Changing it never rolls desktops.
 */
export const PoolRecording = named(
  'PoolRecording',
  z.strictObject({
    video: z.boolean(),
    fps: Fps.default(RECORDING_DEFAULT_FPS),
    quality: RecordingQuality.default('medium'),
  }),
);
export type PoolRecording = z.infer<typeof PoolRecording>;

/**
 * RecordingEstimate is what one recorded desktop costs at these settings, from measurements
 * (1280×800, a browser scrolling continuously — the busy end; an idle screen costs far less).
 */
export const RecordingEstimate = named(
  'RecordingEstimate',
  z.strictObject({
    /** Percent of one CPU core the encoder uses beside the desktop. */
    cpu_pct_one_core: z.number().min(0),
    /** Megabytes stored per minute recorded (10^6 bytes). */
    mb_per_min: z.number().min(0),
  }),
);
export type RecordingEstimate = z.infer<typeof RecordingEstimate>;

/** PoolRecordingView is the pool's recording settings as read back, with their estimated cost. */
export const PoolRecordingView = named(
  'PoolRecordingView',
  z.strictObject({
    video: z.boolean(),
    fps: Fps,
    quality: RecordingQuality,
    estimate: RecordingEstimate,
  }),
);
export type PoolRecordingView = z.infer<typeof PoolRecordingView>;

/**
 * RecordingState: `recording` while the claim runs (segments keep arriving), `finished` once the
 * claim ended and its last segment is stored, `failed` when the encoder could not run at all
 * (`error` says why; segments stored before stay playable).
 */
export const RecordingState = named('RecordingState', z.enum(['recording', 'finished', 'failed']));
export type RecordingState = z.infer<typeof RecordingState>;

/** RecordingSegment is one stored piece of the video (a few seconds, starting on a keyframe). */
export const RecordingSegment = named(
  'RecordingSegment',
  z.strictObject({
    /** 0, 1, 2, … in play order; a gap in time (encoder restarted) is not a gap in seq. */
    seq: z.number().int().min(0),
    /** Wall-clock time of its first frame (the claim's clock, like every timestamp). */
    started_at: Timestamp,
    /** Media time of its first frame: ms from the recording's `started_at`. */
    offset_ms: z.number().int().min(0),
    duration_ms: z.number().int().min(0),
    /** Its bytes in the media stream (plaintext). */
    bytes: z.number().int().min(0),
  }),
);
export type RecordingSegment = z.infer<typeof RecordingSegment>;

/**
 * RecordingGapReason says why the video has no new frame in a span: `no_frames` (the encoder
 * captured nothing: it was starved of CPU or stopped, or the desktop was paused), `encoder_restarted`
 * (the encoder died; the segment it had open was lost, and a new one started later), or
 * `segment_lost` (a stored segment is missing from the run for another reason).
 */
export const RecordingGapReason = named(
  'RecordingGapReason',
  z.enum(['no_frames', 'encoder_restarted', 'segment_lost']),
);
export type RecordingGapReason = z.infer<typeof RecordingGapReason>;

/**
 * RecordingGap is a span of the video without frames, on the video's axis (ms from the
 * recording's `started_at`, like a timeline entry's `offset_ms`): what a player shows there is the
 * last frame before it held still (or nothing), not the live screen. It starts one frame interval
 * after the last frame before it (that frame's own time on screen) and ends at the next frame.
 * Only spans of at least a second (two frame intervals at low fps) are gaps.
 */
export const RecordingGap = named(
  'RecordingGap',
  z.strictObject({
    start_ms: z.number().int().min(0),
    end_ms: z.number().int().min(0),
    reason: RecordingGapReason,
  }),
);
export type RecordingGap = z.infer<typeof RecordingGap>;

/**
 * Recording is `GET /v1/claims/{id}/recording`. The video's time axis IS the claim's wall clock:
 * media time t (seconds) shows the screen at `started_at + t`, so an event at wall time T is at
 * `(T − started_at) / 1000` s in the video, including after an encoder restart (the gap holds the
 * last frame). `media_url` serves the whole video so far as one fragmented MP4 (H.264) with HTTP
 * Range support; a live recording grows between reads.
 */
export const Recording = named(
  'Recording',
  z.strictObject({
    claim_id: ClaimId,
    state: RecordingState,
    fps: Fps,
    quality: RecordingQuality,
    /** The media type `media_url` serves, with its codec (for `<video>`/`canPlayType`). */
    content_type: z.string(),
    /** The first frame's wall-clock time (media time 0); null until the first segment is stored. */
    started_at: Timestamp.nullable(),
    /** When the claim ended and the last segment was flushed; null while recording. */
    ended_at: Timestamp.nullable(),
    /** Media duration so far: the end of the last stored segment, in ms from `started_at`. */
    duration_ms: z.number().int().min(0),
    /** Total bytes of `media_url`. */
    size_bytes: z.number().int().min(0),
    segment_count: z.number().int().min(0),
    segments: z.array(RecordingSegment),
    /** Spans without frames (oldest first), where the picture is not the live screen. */
    gaps: z.array(RecordingGap),
    /** When the retention sweep deletes it (the tenant's `recording_retention_days` after the end). */
    expires_at: Timestamp.nullable(),
    /** Why the encoder stopped for good (`failed`), else null. */
    error: z.string().nullable(),
    /** `/v1/claims/{id}/recording/media`: the video (fragmented MP4, Range requests). */
    media_url: z.string(),
    /** `/v1/claims/{id}/recording/timeline`: the claim's events on the same clock. */
    timeline_url: z.string(),
  }),
);
export type Recording = z.infer<typeof Recording>;

/** RECORDING_CONTENT_TYPE is what `media_url` answers: H.264 Main in fragmented MP4. */
export const RECORDING_CONTENT_TYPE = 'video/mp4';
