import {
  RECORDING_CONTENT_TYPE,
  type Recording as RecordingView,
  type RecordingQuality,
  type RecordingState,
} from '@cubicle/contract/api';
import type { Recording, RecordingSegment } from '@cubicle/db';
import { allGaps } from './recording-gaps.js';

/** The codec `media_url` carries: H.264 Main (libx264's choice for yuv420p at these sizes). */
export const RECORDING_CODECS = 'avc1.4d401f';

/** toRecordingView renders a recording row and its segments (in seq order). */
export function toRecordingView(row: Recording, segments: RecordingSegment[]): RecordingView {
  const child = (name: string) => `/v1/claims/${row.claimId}/recording/${name}`;
  return {
    claim_id: row.claimId,
    state: row.state as RecordingState,
    fps: row.fps,
    quality: row.quality as RecordingQuality,
    content_type: `${RECORDING_CONTENT_TYPE}; codecs="${RECORDING_CODECS}"`,
    started_at: row.startedAt?.toISOString() ?? null,
    ended_at: row.endedAt?.toISOString() ?? null,
    duration_ms: row.durationMs,
    size_bytes: row.segmentCount === 0 ? 0 : Number(row.sizeBytes) + row.initBytes,
    segment_count: row.segmentCount,
    segments: segments.map((s) => ({
      seq: s.seq,
      started_at: s.startedAt.toISOString(),
      offset_ms: s.offsetMs,
      duration_ms: s.durationMs,
      bytes: s.bytes,
    })),
    gaps: allGaps(segments),
    expires_at: row.expiresAt?.toISOString() ?? null,
    error: row.error,
    media_url: child('media'),
    timeline_url: child('timeline'),
  };
}
