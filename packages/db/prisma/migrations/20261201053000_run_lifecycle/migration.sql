-- Runs: why a run ended, the worker holding its stream (a lease that lapses when the worker
-- dies), a requested cancel, and the last seq handed out (dense event numbering).
ALTER TABLE "runs" ADD COLUMN "signal" TEXT;
ALTER TABLE "runs" ADD COLUMN "end_reason" TEXT;
ALTER TABLE "runs" ADD COLUMN "end_detail" TEXT;
ALTER TABLE "runs" ADD COLUMN "last_seq" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "runs" ADD COLUMN "worker_id" TEXT;
ALTER TABLE "runs" ADD COLUMN "lease_expires_at" TIMESTAMPTZ(3);
ALTER TABLE "runs" ADD COLUMN "cancel_requested_at" TIMESTAMPTZ(3);
ALTER TABLE "runs" ADD COLUMN "cancel_grace_ms" INTEGER;

-- The lost-worker sweep looks only at live runs.
CREATE INDEX "runs_live_lease_idx" ON "runs"("lease_expires_at") WHERE "status" IN ('queued', 'running');
