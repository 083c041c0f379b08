-- Spans of a recording's video without frames (issue 35): the encoder starved or stopped, the
-- desktop paused, or a segment lost to an encoder restart. Each stored segment carries the gaps
-- found while storing it (inside it, and between it and the segment stored before), as the
-- contract's RecordingGap objects on the recording's axis: [{"start_ms","end_ms","reason"}].
ALTER TABLE "recording_segments" ADD COLUMN "gaps" JSONB NOT NULL DEFAULT '[]';
