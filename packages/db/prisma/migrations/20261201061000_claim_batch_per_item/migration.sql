-- cubicle_claim_batch takes its items as text, one JSON document each, and parses each inside
-- the item's own subtransaction. With one jsonb parameter, a single item Postgres cannot store
-- (a \u0000 or an unpaired surrogate in its metadata) failed the cast of the whole array, so the
-- statement failed for every item of the batch, whatever tenant sent it. Now such an item is
-- reported like any refused item (err_code 22P05 or 22P02) and its neighbours still commit.
-- Everything else is as in migration claim_batch.
--
-- p_items: one JSON text per item: {now (the request's time, ISO 8601), tenant_id, pool_name,
-- claim_id, name, metadata, ttl_seconds|null, idempotency: null | {id, key, scope, request_hash,
-- expires_at}}. One row per item, in order: idx (from 0), and the claim's facts or err_code
-- (SQLSTATE), err_constraint and err_message when the item failed.
DROP FUNCTION cubicle_claim_batch(jsonb);

CREATE FUNCTION cubicle_claim_batch(p_items text[])
RETURNS TABLE (idx int, pool_id text, quota_ok boolean, lim int, used int, claim jsonb,
               sandbox jsonb, err_code text, err_constraint text, err_message text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it jsonb;
  v_pool record;
  v_sandbox sandboxes%ROWTYPE;
  v_claim claims%ROWTYPE;
  v_ttl int;
  v_idem jsonb;
  p_now timestamptz;
BEGIN
  FOR i IN 1 .. COALESCE(array_length(p_items, 1), 0) LOOP
    idx := i - 1;
    pool_id := NULL; quota_ok := false; lim := 0; used := 0; claim := NULL; sandbox := NULL;
    err_code := NULL; err_constraint := NULL; err_message := NULL;
    BEGIN
      -- Parsed here, inside the item's subtransaction: a document Postgres refuses fails this
      -- item alone.
      it := p_items[i]::jsonb;
      p_now := (it->>'now')::timestamptz;
      SELECT p.id, p.generation, p.idle_timeout_seconds, p.claim_ttl_seconds,
             p.max_claim_lifetime_seconds
        INTO v_pool
        FROM pools p
        WHERE p.tenant_id = it->>'tenant_id' AND p.name = it->>'pool_name' AND p.deleted_at IS NULL;
      IF NOT FOUND THEN
        RETURN NEXT;
        CONTINUE;
      END IF;
      pool_id := v_pool.id;

      SELECT t.max_concurrent_claims,
             (SELECT count(*)::int FROM claims c
               WHERE c.tenant_id = t.id AND c.status IN ('pending', 'active'))
        INTO lim, used
        FROM tenants t WHERE t.id = it->>'tenant_id';
      quota_ok := COALESCE(used < lim, false);
      IF NOT quota_ok THEN
        lim := COALESCE(lim, 0); used := COALESCE(used, 0);
        RETURN NEXT;
        CONTINUE;
      END IF;

      -- SKIP LOCKED: concurrent batches each take different sandboxes without waiting; the
      -- state check makes a double claim impossible. Rows this transaction already claimed are
      -- no longer 'warm', so a later item of the same pool takes the next one.
      UPDATE sandboxes s SET state = 'claimed', claimed_at = p_now, updated_at = p_now
        WHERE s.id = (
          SELECT w.id FROM sandboxes w
           WHERE w.pool_id = v_pool.id AND w.state = 'warm' AND w.generation = v_pool.generation
           ORDER BY w.created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
          AND s.state = 'warm'
        RETURNING s.* INTO v_sandbox;
      IF NOT FOUND THEN v_sandbox := NULL; END IF;

      v_ttl := COALESCE((it->>'ttl_seconds')::int, v_pool.claim_ttl_seconds);
      INSERT INTO claims (id, tenant_id, pool_id, sandbox_id, name, status, metadata, ttl_seconds,
                          idle_timeout_seconds, expires_at, max_expires_at, last_heartbeat_at,
                          created_at, updated_at)
        VALUES (it->>'claim_id', it->>'tenant_id', v_pool.id, v_sandbox.id, it->>'name',
                CASE WHEN v_sandbox.id IS NULL THEN 'pending'::claim_status ELSE 'active'::claim_status END,
                it->'metadata', v_ttl, v_pool.idle_timeout_seconds,
                LEAST(p_now + make_interval(secs => v_ttl),
                      p_now + make_interval(secs => v_pool.max_claim_lifetime_seconds)),
                p_now + make_interval(secs => v_pool.max_claim_lifetime_seconds),
                p_now, p_now, p_now)
        RETURNING * INTO v_claim;

      v_idem := it->'idempotency';
      IF v_idem IS NOT NULL AND jsonb_typeof(v_idem) = 'object' THEN
        INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash, response_status,
                                      resource_id, created_at, completed_at, expires_at)
          VALUES (v_idem->>'id', it->>'tenant_id', v_idem->>'key', v_idem->>'scope',
                  v_idem->>'request_hash',
                  CASE WHEN v_claim.status = 'active' THEN 201 ELSE 202 END, v_claim.id,
                  p_now, p_now, (v_idem->>'expires_at')::timestamptz);
      END IF;

      claim := to_jsonb(v_claim);
      sandbox := CASE WHEN v_sandbox.id IS NULL THEN NULL ELSE to_jsonb(v_sandbox) END;
      RETURN NEXT;
    EXCEPTION WHEN OTHERS THEN
      -- Everything this item wrote is rolled back; report why and go on with the next one.
      GET STACKED DIAGNOSTICS err_code = RETURNED_SQLSTATE, err_constraint = CONSTRAINT_NAME,
                              err_message = MESSAGE_TEXT;
      claim := NULL; sandbox := NULL;
      RETURN NEXT;
    END;
  END LOOP;
END;
$$;
