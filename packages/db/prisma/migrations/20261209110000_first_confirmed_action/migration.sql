-- claims.first_confirmed_action_at: when the claim's first ActionResult with effect `confirmed`
-- was stored (issue 38, time to first confirmed action = this − created_at). Written once, by the
-- statement that stores the action (a guarded UPDATE `WHERE first_confirmed_action_at IS NULL`
-- in the same statement as the INSERT), so concurrent confirmed actions of one claim cannot both
-- win and a later one never overwrites it. Not indexed: pool insights read it beside
-- activated_at, whose (pool_id, activated_at) index already selects the window's claims, and an
-- unindexed column keeps the one UPDATE a heap-only tuple update.
ALTER TABLE "claims" ADD COLUMN "first_confirmed_action_at" TIMESTAMPTZ(3);
