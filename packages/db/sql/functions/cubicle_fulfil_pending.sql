-- cubicle_fulfil_pending activates up to p_limit of the pool's pending claims, oldest first, by
-- the same rules as a claim that finds a warm sandbox at once: the warm pick
-- (cubicle_take_warm_sandbox) and the deadline (cubicle_claim_expiry), both counted from now, so
-- time spent waiting for a desktop is not charged. SKIP LOCKED on the claims lets several
-- workers fulfil one pool at once. Returns the claims it activated; pending and active both
-- count as live, so the tenant's counter does not change.
CREATE OR REPLACE FUNCTION cubicle_fulfil_pending(p_pool_id text, p_now timestamptz,
                                                  p_limit int)
RETURNS TABLE (claim_id text, tenant_id text, sandbox_id text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_pool record;
  v_claim record;
  v_sandbox sandboxes%ROWTYPE;
BEGIN
  SELECT p.id, p.generation, p.max_claim_lifetime_seconds INTO v_pool
    FROM pools p WHERE p.id = p_pool_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  FOR n IN 1 .. p_limit LOOP
    SELECT c.id, c.tenant_id, c.ttl_seconds INTO v_claim
      FROM claims c
     WHERE c.pool_id = p_pool_id AND c.status = 'pending'
     ORDER BY c.created_at, c.id LIMIT 1 FOR UPDATE SKIP LOCKED;
    EXIT WHEN NOT FOUND;
    v_sandbox := cubicle_take_warm_sandbox(v_pool.id, v_pool.generation, p_now);
    EXIT WHEN v_sandbox.id IS NULL;
    UPDATE claims c
       SET status = 'active', sandbox_id = v_sandbox.id,
           expires_at = cubicle_claim_expiry(p_now, c.ttl_seconds, v_pool.max_claim_lifetime_seconds),
           max_expires_at = p_now + make_interval(secs => v_pool.max_claim_lifetime_seconds),
           last_heartbeat_at = p_now, updated_at = p_now
     WHERE c.id = v_claim.id;
    claim_id := v_claim.id;
    tenant_id := v_claim.tenant_id;
    sandbox_id := v_sandbox.id;
    RETURN NEXT;
  END LOOP;
END;
$$;
