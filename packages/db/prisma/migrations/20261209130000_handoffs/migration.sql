-- Handoffs (issue 33): an agent hands a claimed desktop to a human for a while. One row per
-- handoff; at most one `active` per claim (the partial unique index below is what makes a second
-- request 409 handoff_active under concurrency). While one is active the agent's driving calls are
-- refused (the worker reads it beside the claim, cubicle_live_guest) and the claim's TTL and idle
-- rules are held (cubicle_claims_due_to_end skips them; the hard maximum still ends the claim).
CREATE TYPE "handoff_state" AS ENUM ('active', 'returned', 'expired', 'ended');

CREATE TABLE "handoffs" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "state" "handoff_state" NOT NULL DEFAULT 'active',
    "reason" TEXT NOT NULL,
    "for_whom" TEXT,
    "ttl_seconds" INTEGER NOT NULL,
    -- Renewed by input through the handoff's control stream; the worker's sweep ends it after.
    "lease_expires_at" TIMESTAMPTZ(3) NOT NULL,
    -- What was left of the claim's TTL when the agent asked: given back on return.
    "claim_ttl_left_ms" BIGINT NOT NULL,
    "requested_by_key_id" TEXT,
    "taken_at" TIMESTAMPTZ(3),
    "taken_by_key_id" TEXT,
    "last_input_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "ended_by_key_id" TEXT,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "handoffs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "handoffs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "handoffs_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "handoffs_claim_id_idx" ON "handoffs"("claim_id");
CREATE UNIQUE INDEX "handoffs_one_active_per_claim" ON "handoffs"("claim_id") WHERE "state" = 'active';
-- The lease sweep reads only active handoffs, by deadline.
CREATE INDEX "handoffs_active_lease_idx" ON "handoffs"("lease_expires_at") WHERE "state" = 'active';

-- A control ticket bound to a handoff drives the desktop only while that handoff is active; its
-- tickets are revoked when it ends.
ALTER TABLE "viewer_tickets" ADD COLUMN "handoff_id" TEXT;
ALTER TABLE "viewer_tickets" ADD CONSTRAINT "viewer_tickets_handoff_id_fkey" FOREIGN KEY ("handoff_id") REFERENCES "handoffs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "viewer_tickets_handoff_id_idx" ON "viewer_tickets"("handoff_id");
