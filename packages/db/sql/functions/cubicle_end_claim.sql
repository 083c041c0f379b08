-- cubicle_end_claim ends a live claim (pending or active) with its reason, and everything the end
-- causes, in one statement and so one transaction: the claim is released, its sandbox goes to
-- releasing (destroyed, never handed to another claim), its viewer tickets are revoked, and a
-- `claim.ended` delivery is written for each enabled endpoint subscribed to it (p_delivery_ids
-- are ids made by the caller, one per possible endpoint; the body is the one recordWebhookEvent
-- writes). The tenant's row is locked first, as cubicle_claim_batch locks it: the trigger that
-- counts live claims updates that row, and one lock order keeps a release and a claim of the
-- same tenant from deadlocking.
-- Returns one row when the tenant has the claim: `ended` tells whether this call ended it (false:
-- it was released before; releasing is idempotent), with the claim, its pool's name and its
-- sandbox as they are now. No row: no such claim of this tenant.
CREATE OR REPLACE FUNCTION cubicle_end_claim(p_tenant_id text, p_claim_id text,
                                             p_reason release_reason, p_now timestamptz,
                                             p_delivery_ids text[], p_event_id text)
RETURNS TABLE (ended boolean, claim jsonb, pool_name text, sandbox jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_claim claims%ROWTYPE;
  v_pool_name text;
BEGIN
  PERFORM 1 FROM tenants t WHERE t.id = p_tenant_id FOR NO KEY UPDATE;
  UPDATE claims c
     SET status = 'released', released_at = p_now, release_reason = p_reason, updated_at = p_now
   WHERE c.id = p_claim_id AND c.tenant_id = p_tenant_id AND c.status IN ('pending', 'active')
  RETURNING c.* INTO v_claim;
  ended := FOUND;
  IF NOT ended THEN
    SELECT c.* INTO v_claim FROM claims c WHERE c.id = p_claim_id AND c.tenant_id = p_tenant_id;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  SELECT p.name INTO v_pool_name FROM pools p WHERE p.id = v_claim.pool_id;
  IF ended THEN
    IF v_claim.sandbox_id IS NOT NULL THEN
      UPDATE sandboxes s
         SET state = 'releasing', state_reason = 'claim_released', updated_at = p_now
       WHERE s.id = v_claim.sandbox_id AND s.state IN ('claimed', 'warm', 'provisioning');
    END IF;
    UPDATE viewer_tickets v SET revoked_at = p_now
     WHERE v.claim_id = p_claim_id AND v.revoked_at IS NULL;
    INSERT INTO webhook_deliveries
      (id, tenant_id, webhook_id, event_id, event_type, body, next_attempt_at, locked_until,
       created_at, updated_at)
    SELECT p_delivery_ids[t.n], p_tenant_id, t.id, p_event_id, 'claim.ended',
           json_build_object(
             'type', 'claim.ended',
             'timestamp', to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', json_build_object(
               'claim_id', v_claim.id, 'name', v_claim.name, 'pool', v_pool_name,
               'pool_id', v_claim.pool_id, 'sandbox_id', v_claim.sandbox_id,
               'metadata', v_claim.metadata, 'reason', v_claim.release_reason))::text,
           p_now, NULL, p_now, p_now
      FROM (SELECT w.id, row_number() OVER (ORDER BY w.id) AS n
              FROM webhook_endpoints w
             WHERE w.tenant_id = p_tenant_id AND w.enabled AND 'claim.ended' = ANY (w.events)
             ORDER BY w.id LIMIT cardinality(p_delivery_ids)) t;
  END IF;
  claim := to_jsonb(v_claim);
  pool_name := v_pool_name;
  -- Without the guest token's ciphertext, as cubicle_claim_batch answers: the view never
  -- renders it, and a secret's ciphertext has no business in a claim's answer path.
  sandbox := (SELECT to_jsonb(s) - 'guest_token_ciphertext' FROM sandboxes s
               WHERE s.id = v_claim.sandbox_id);
  RETURN NEXT;
END;
$$;
