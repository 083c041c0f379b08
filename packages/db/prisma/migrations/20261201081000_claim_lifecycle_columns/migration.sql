-- The claim lifecycle's own columns (issue 15).
--
-- tenants.live_claims counts the tenant's claims that are pending or active, so the claim hot
-- path checks the concurrent-claims quota by reading one locked row instead of counting claims.
-- It is kept by the trigger of migration live_claims_trigger (defined in
-- packages/db/sql/functions/cubicle_count_live_claims.sql), which also fills it.
--
-- sandboxes.state_reason names why a sandbox is in its state: the reason of the transition that
-- put it there (packages/control-plane/src/lifecycle/states.ts lists them). failure_reason keeps
-- the detail of a failure.
ALTER TABLE "tenants" ADD COLUMN "live_claims" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "sandboxes" ADD COLUMN "state_reason" TEXT;
