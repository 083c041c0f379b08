import { z } from 'zod';
import { named } from '../registry.js';

/**
 * The guest's screen video (driver-guest src/video): an FFmpeg encoder beside the desktop writes
 * H.264 fragmented-MP4 segments of a few seconds into the sandbox; the control plane pulls the
 * finished ones (`video.segment`), stores them, and acknowledges them (`video.ack`) so the guest
 * deletes its copy. Each encoder run ("run") has its own init segment; a restart after a crash
 * starts a new run. Everything here is idempotent, so a worker that restarts simply asks again.
 */

/** VideoSegmentId names a file of a run: `r<run>-init` or `r<run>-<index>` (index from 0). */
export const VideoSegmentId = named(
  'GuestVideoSegmentId',
  z.string().regex(/^r[0-9]{1,6}-(init|[0-9]{1,9})$/, 'r<run>-init or r<run>-<index>'),
);
export type VideoSegmentId = z.infer<typeof VideoSegmentId>;

/** VideoStartRequest starts (or keeps running) the encoder; the same settings twice is a no-op. */
export const VideoStartRequest = named(
  'GuestVideoStartRequest',
  z.strictObject({
    fps: z.number().int().min(1).max(15),
    quality: z.enum(['low', 'medium', 'high']),
    /** Target segment length; a segment ends at the first keyframe after it. */
    segment_seconds: z.number().int().min(1).max(10).default(2),
  }),
);
export type VideoStartRequest = z.infer<typeof VideoStartRequest>;

/** VideoSegment is one finished (closed, never rewritten) media segment on the guest's disk. */
export const VideoSegment = named(
  'GuestVideoSegment',
  z.strictObject({
    id: VideoSegmentId,
    run: z.number().int().min(0),
    index: z.number().int().min(0),
    /** Wall-clock ms (epoch) of its run's first frame (media time 0 of the run's segments). */
    run_started_at_ms: z.number().int(),
    /** Wall-clock ms (epoch) of its own first frame: the run's start plus the segments before. */
    started_at_ms: z.number().int(),
    duration_ms: z.number().int().min(0),
    bytes: z.number().int().min(0),
    /** Its run's init segment (codec setup), to put before the run's first media segment. */
    init_id: VideoSegmentId,
  }),
);
export type VideoSegment = z.infer<typeof VideoSegment>;

/**
 * VideoStatus answers every video call: whether the encoder runs, how often it was restarted
 * (the guest restarts a dead encoder itself, with backoff), and the finished segments not yet
 * acknowledged, oldest first.
 */
export const VideoStatus = named(
  'GuestVideoStatus',
  z.strictObject({
    state: z.enum(['idle', 'recording', 'stopped', 'failed']),
    fps: z.number().int().nullable(),
    quality: z.enum(['low', 'medium', 'high']).nullable(),
    run: z.number().int().min(0).nullable(),
    encoder_pid: z.number().int().nullable(),
    restarts: z.number().int().min(0),
    error: z.string().nullable(),
    segments: z.array(VideoSegment),
  }),
);
export type VideoStatus = z.infer<typeof VideoStatus>;

/** VideoSegmentRequest asks for one file's bytes. */
export const VideoSegmentRequest = named(
  'GuestVideoSegmentRequest',
  z.strictObject({ id: VideoSegmentId }),
);
export type VideoSegmentRequest = z.infer<typeof VideoSegmentRequest>;

/**
 * VideoSegmentData carries one file as base64 in JSON, like the archive's chunks: segments are a
 * few hundred KB, and one JSON transport keeps a single checked path between worker and guest.
 */
export const VideoSegmentData = named(
  'GuestVideoSegmentData',
  z.strictObject({
    id: VideoSegmentId,
    bytes: z.number().int().min(0),
    data_base64: z.base64(),
  }),
);
export type VideoSegmentData = z.infer<typeof VideoSegmentData>;

/** VideoAckRequest: these segments are stored; the guest deletes them (unknown ids are ignored). */
export const VideoAckRequest = named(
  'GuestVideoAckRequest',
  z.strictObject({ ids: z.array(VideoSegmentId).max(1000) }),
);
export type VideoAckRequest = z.infer<typeof VideoAckRequest>;
