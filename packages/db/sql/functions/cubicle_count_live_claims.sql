-- cubicle_count_live_claims keeps tenants.live_claims equal to the tenant's pending and active
-- claims, in the transaction that changes them: a claim inserted (always pending or active), a
-- claim released, a claim deleted. Whatever writes the claim (the claim batch, a release, a test
-- fixture) the counter follows, so the quota check reads one row and never counts.
-- Lock order: a path that inserts or releases a tenant's claim locks the tenant's row first
-- (cubicle_claim_batch does, and so does the lifecycle's release), so this UPDATE never waits
-- while holding a claim row another transaction's insert is waiting for.
-- The one exception: cubicle_claim_batch counts the claims it inserts itself, once per tenant per
-- batch and outside its items' subtransactions, and says so with the transaction-local setting
-- cubicle.live_claims_counter = 'claim_batch' while it runs. Measured (4 batches of 8 claims of
-- one tenant at once): one UPDATE of the tenant row per claim, each in the item's
-- subtransaction while the other batches queue on that row, made a burst 14.6 ms in Postgres
-- against 5.7 ms with one UPDATE per batch.
CREATE OR REPLACE FUNCTION cubicle_count_live_claims()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  v_delta int := 0;
BEGIN
  IF TG_OP = 'INSERT' AND current_setting('cubicle.live_claims_counter', true) = 'claim_batch' THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status IN ('pending', 'active') THEN
    v_delta := v_delta + 1;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status IN ('pending', 'active') THEN
    v_delta := v_delta - 1;
  END IF;
  IF v_delta <> 0 THEN
    UPDATE tenants t SET live_claims = t.live_claims + v_delta
     WHERE t.id = CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END;
  END IF;
  RETURN NULL;
END;
$$;
