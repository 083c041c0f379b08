-- Video recordings of claims (issue 35). A pool offers recording (`pools.recording`, the contract's
-- PoolRecording, null = none); a recorded claim has one `recordings` row, made with the claim, and
-- its video is stored as segments in the tenant's sealed object store under
-- `recordings/<claim_id>/`, one `recording_segments` row per stored segment. A segment's object is
-- written before its row, and rows go before their objects in the retention sweep, so a row always
-- has its object (a crash between leaves at most an orphan object, removed by prefix).
ALTER TABLE "pools" ADD COLUMN "recording" JSONB;

-- How long a tenant's recordings stay after their claim ended (days), set like other quotas.
ALTER TABLE "tenants" ADD COLUMN "recording_retention_days" INTEGER NOT NULL DEFAULT 30;

CREATE TABLE "recordings" (
    -- One recording per claim: the claim's id is the recording's.
    "claim_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    -- recording | finished | failed (RecordingState)
    "state" TEXT NOT NULL DEFAULT 'recording',
    "fps" INTEGER NOT NULL,
    "quality" TEXT NOT NULL,
    -- Wall-clock time of the first stored frame: media time 0.
    "started_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    -- End of the last stored segment in ms from started_at; the media's length in bytes.
    "duration_ms" INTEGER NOT NULL DEFAULT 0,
    "size_bytes" BIGINT NOT NULL DEFAULT 0,
    "segment_count" INTEGER NOT NULL DEFAULT 0,
    -- Object key of the init segment (codec setup) the media stream starts with.
    "init_key" TEXT,
    "init_bytes" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    -- Set when the recording finishes: ended_at + the tenant's recording_retention_days.
    "expires_at" TIMESTAMPTZ(3),
    -- The worker pulling its segments holds a short lease, so two workers never pull one recording.
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recordings_pkey" PRIMARY KEY ("claim_id"),
    CONSTRAINT "recordings_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "recordings_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The puller reads the live ones; the retention sweep reads by deadline.
CREATE INDEX "recordings_state_idx" ON "recordings"("state");
CREATE INDEX "recordings_expires_at_idx" ON "recordings"("expires_at");

CREATE TABLE "recording_segments" (
    "claim_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    -- The guest's name for it (`r<run>-<index>`): a segment stored twice (worker died before its
    -- ack) is recognised and not stored again.
    "guest_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "offset_ms" INTEGER NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    -- Plaintext bytes (the media stream's); the sealed object is larger.
    "bytes" INTEGER NOT NULL,
    "object_key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "recording_segments_pkey" PRIMARY KEY ("claim_id", "seq"),
    CONSTRAINT "recording_segments_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "recordings"("claim_id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE UNIQUE INDEX "recording_segments_claim_id_guest_id_key" ON "recording_segments"("claim_id", "guest_id");
