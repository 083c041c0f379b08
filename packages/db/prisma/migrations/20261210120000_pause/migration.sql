-- Pause and resume (issue 34). A paused claim's desktop is frozen; paused_at says since when.
-- paused_ms sums the pauses that have ended; last_active_at is auto-pause's idle clock (driving
-- calls, viewer connections, run starts). Pools opt in to auto-pause with idle_pause_seconds.
ALTER TABLE "claims" ADD COLUMN "paused_at" TIMESTAMPTZ(3),
  ADD COLUMN "paused_ms" BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN "last_active_at" TIMESTAMPTZ(3);
ALTER TABLE "pools" ADD COLUMN "idle_pause_seconds" INTEGER;
ALTER TABLE "usage_hourly" ADD COLUMN "paused_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;

-- Each pause as an interval, for usage (paused seconds per hour) and the claim's history.
CREATE TABLE "claim_pauses" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    -- The claim's TTL deadline when it paused: resume gives back the TTL that was left.
    "expires_before" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "claim_pauses_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "claim_pauses_claim_id_idx" ON "claim_pauses"("claim_id");
CREATE INDEX "claim_pauses_started_at_idx" ON "claim_pauses"("started_at");
-- At most one open pause per claim: two resumes or pauses racing cannot both win.
CREATE UNIQUE INDEX "claim_pauses_one_open" ON "claim_pauses"("claim_id") WHERE "ended_at" IS NULL;
ALTER TABLE "claim_pauses" ADD CONSTRAINT "claim_pauses_claim_id_fkey" FOREIGN KEY ("claim_id")
  REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;

