-- cubicle_claim_batch decides several claims in one round trip and one transaction (the API
-- group-commits the claims that arrive together). Each item is decided here, once, and its
-- outcome returned as a value; nothing is inferred from which constraint failed:
--   replay          its Idempotency-Key was used with the same body: that request's claim and
--                   answer (replay_status; a pending answer that has become active answers 201)
--   key_reused      its key was used with another body
--   key_in_progress its key is held by a request that has not recorded its answer
--   reconnect       a live claim of its name exists in the pool: that claim
--   pool_not_found  the tenant has no live pool of that name
--   quota_exceeded  the tenant's live claims (tenants.live_claims) reached max_concurrent_claims
--   active          a new claim holding the oldest warm sandbox (cubicle_take_warm_sandbox)
--   pending         a new claim waiting for one (cubicle_fulfil_pending activates it later)
--   error           the item failed (err_code: SQLSTATE, e.g. 22P05 for a document Postgres
--                   cannot store); what it wrote is rolled back, its neighbours still commit
-- An item's sealed secrets (sealed by the API before the call) are written with its claim, in its
-- subtransaction: a claim and its secrets commit together, in the same round trip as a claim
-- without any. A name the claim already has is replaced, also on a replay or a reconnect (the
-- request ends with what it said last); a released claim takes none.
-- has_hooks tells the caller, for a new active claim, that the tenant has an enabled webhook
-- endpoint subscribed to claim.activated (the caller announces it only then: no probe of its own).
-- pool_recording is the pool's `recording` setting (pools.recording, null: none), read with the
-- pool row for a new claim: the caller decides from it whether the claim is recorded, without a
-- second round trip to read the pool again.
-- The key decides first, then a live claim of the name (so a retry or a reconnect answers even
-- at the quota), then the quota. The quota is checked under the tenant's row lock (FOR NO KEY
-- UPDATE, held to commit): concurrent claims of one tenant, in any batch or API process, never
-- pass it together. Callers send a batch's items ordered by tenant, so batches take tenant locks
-- in one order. A request racing this one with the same key or name surfaces as a unique
-- violation of the insert; its subtransaction is rolled back (the sandbox it took included) and
-- the item is decided again from what that request stored.
-- tenants.live_claims: the new claims are counted here, one UPDATE per run of one tenant's items
-- at the top level of the batch (not one per claim inside each item's subtransaction, which made
-- concurrent batches of one tenant three times slower: cubicle_count_live_claims), with the
-- insert trigger told to leave them alone for the function's duration. The quota check adds the
-- claims this batch took but has not yet written to the counter.
--
-- p_items: one JSON text per item, parsed inside the item's own subtransaction: {now (the
-- request's time, ISO 8601), tenant_id, pool_name, claim_id, name, named (the client chose the
-- name), metadata, ttl_seconds|null, idempotency: null | {id, key, scope, request_hash,
-- expires_at}, secrets?: [{id, name, ciphertext, nonce, wrapped_key (base64), key_id}]}. One row
-- per item, in order: idx (from 0) and the outcome's facts.
CREATE OR REPLACE FUNCTION cubicle_claim_batch(p_items text[])
RETURNS TABLE (idx int, outcome text, pool_id text, lim int, used int, replay_status int,
               claim jsonb, sandbox jsonb, err_code text, err_message text, has_hooks boolean,
               pool_recording jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  it jsonb;
  v_pool record;
  v_sandbox sandboxes%ROWTYPE;
  v_claim claims%ROWTYPE;
  v_key idempotency_keys%ROWTYPE;
  v_idem jsonb;
  v_ttl int;
  p_now timestamptz;
  v_count_tenant text;
  v_count_delta int := 0;
BEGIN
  PERFORM set_config('cubicle.live_claims_counter', 'claim_batch', true);
  FOR i IN 1 .. COALESCE(array_length(p_items, 1), 0) LOOP
    idx := i - 1;
    -- Three rounds at most: each lost race is decided from what the winner stored; a winner that
    -- vanished again (its claim ended, its key expired) is rare, and twice is rarer.
    FOR attempt IN 1 .. 3 LOOP
      outcome := NULL; pool_id := NULL; lim := NULL; used := NULL; replay_status := NULL;
      claim := NULL; sandbox := NULL; err_code := NULL; err_message := NULL; has_hooks := false;
      pool_recording := NULL;
      -- One subtransaction per round: what a lost race or a refused item wrote (the sandbox it
      -- took included) is rolled back alone. One, not two nested: a backend caches 64
      -- subtransaction ids, and past that every snapshot in the cluster reads pg_subtrans.
      BEGIN
        it := p_items[i]::jsonb;
        p_now := (it->>'now')::timestamptz;
        v_idem := CASE WHEN jsonb_typeof(it->'idempotency') = 'object' THEN it->'idempotency' END;
        SELECT p.id, p.generation, p.idle_timeout_seconds, p.claim_ttl_seconds,
               p.max_claim_lifetime_seconds, p.recording
          INTO v_pool
          FROM pools p
         WHERE p.tenant_id = it->>'tenant_id' AND p.name = it->>'pool_name'
           AND p.deleted_at IS NULL;
        IF NOT FOUND THEN
          outcome := 'pool_not_found';
          EXIT;
        END IF;
        pool_id := v_pool.id;

        IF v_idem IS NOT NULL THEN
          SELECT * INTO v_key FROM idempotency_keys k
           WHERE k.tenant_id = it->>'tenant_id' AND k.scope = v_idem->>'scope'
             AND k.key = v_idem->>'key';
          IF FOUND AND v_key.expires_at <= p_now THEN
            -- An expired key is forgotten and the request runs as new.
            DELETE FROM idempotency_keys k WHERE k.id = v_key.id;
          ELSIF FOUND THEN
            IF v_key.request_hash <> v_idem->>'request_hash' THEN
              outcome := 'key_reused';
              EXIT;
            END IF;
            SELECT * INTO v_claim FROM claims c
             WHERE c.id = v_key.resource_id AND c.tenant_id = it->>'tenant_id';
            IF v_key.response_status IS NULL OR NOT FOUND THEN
              outcome := 'key_in_progress';
              EXIT;
            END IF;
            outcome := 'replay';
            replay_status := CASE WHEN v_key.response_status = 202 AND v_claim.status = 'active'
                                  THEN 201 ELSE v_key.response_status END;
            PERFORM cubicle_store_claim_secrets(it, v_claim);
            EXIT;
          END IF;
        END IF;

        IF (it->>'named')::boolean THEN
          SELECT * INTO v_claim FROM claims c
           WHERE c.tenant_id = it->>'tenant_id' AND c.pool_id = v_pool.id
             AND c.name = it->>'name' AND c.status <> 'released';
          IF FOUND THEN
            IF v_idem IS NOT NULL THEN
              INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash,
                                            response_status, resource_id, created_at,
                                            completed_at, expires_at)
                VALUES (v_idem->>'id', it->>'tenant_id', v_idem->>'key', v_idem->>'scope',
                        v_idem->>'request_hash', 200, v_claim.id, p_now, p_now,
                        (v_idem->>'expires_at')::timestamptz)
                ON CONFLICT (tenant_id, scope, key) DO NOTHING;
              -- Another request took the key meanwhile: its record decides this one.
              CONTINUE WHEN NOT FOUND;
            END IF;
            outcome := 'reconnect';
            PERFORM cubicle_store_claim_secrets(it, v_claim);
            EXIT;
          END IF;
        END IF;

        SELECT t.max_concurrent_claims, t.live_claims INTO lim, used
          FROM tenants t WHERE t.id = it->>'tenant_id' FOR NO KEY UPDATE;
        IF v_count_tenant = it->>'tenant_id' THEN
          used := used + v_count_delta;
        END IF;
        IF NOT COALESCE(used < lim, false) THEN
          lim := COALESCE(lim, 0); used := COALESCE(used, 0);
          outcome := 'quota_exceeded';
          EXIT;
        END IF;

        v_sandbox := cubicle_take_warm_sandbox(v_pool.id, v_pool.generation, p_now);
        v_ttl := COALESCE((it->>'ttl_seconds')::int, v_pool.claim_ttl_seconds);
        INSERT INTO claims (id, tenant_id, pool_id, sandbox_id, name, status, metadata,
                            ttl_seconds, idle_timeout_seconds, expires_at, max_expires_at,
                            last_heartbeat_at, created_at, updated_at)
          VALUES (it->>'claim_id', it->>'tenant_id', v_pool.id, v_sandbox.id, it->>'name',
                  CASE WHEN v_sandbox.id IS NULL THEN 'pending'::claim_status
                       ELSE 'active'::claim_status END,
                  it->'metadata', v_ttl, v_pool.idle_timeout_seconds,
                  cubicle_claim_expiry(p_now, v_ttl, v_pool.max_claim_lifetime_seconds),
                  p_now + make_interval(secs => v_pool.max_claim_lifetime_seconds),
                  p_now, p_now, p_now)
          RETURNING * INTO v_claim;
        IF v_idem IS NOT NULL THEN
          INSERT INTO idempotency_keys (id, tenant_id, key, scope, request_hash,
                                        response_status, resource_id, created_at,
                                        completed_at, expires_at)
            VALUES (v_idem->>'id', it->>'tenant_id', v_idem->>'key', v_idem->>'scope',
                    v_idem->>'request_hash',
                    CASE WHEN v_claim.status = 'active' THEN 201 ELSE 202 END, v_claim.id,
                    p_now, p_now, (v_idem->>'expires_at')::timestamptz);
        END IF;
        PERFORM cubicle_store_claim_secrets(it, v_claim);
        outcome := v_claim.status::text;
        pool_recording := v_pool.recording;
        has_hooks := v_sandbox.id IS NOT NULL AND EXISTS (
          SELECT 1 FROM webhook_endpoints w
           WHERE w.tenant_id = it->>'tenant_id' AND w.enabled
             AND 'claim.activated' = ANY (w.events));
        claim := to_jsonb(v_claim);
        -- Without the guest token's ciphertext: the API never renders it, and a secret's
        -- ciphertext has no business in a claim's answer path.
        sandbox := CASE WHEN v_sandbox.id IS NULL THEN NULL
                        ELSE to_jsonb(v_sandbox) - 'guest_token_ciphertext' END;
        EXIT;
      EXCEPTION
        WHEN unique_violation THEN
          -- Lost a race on the key or the name: the next round decides from what the winner
          -- stored.
          outcome := NULL;
        WHEN OTHERS THEN
          GET STACKED DIAGNOSTICS err_code = RETURNED_SQLSTATE, err_message = MESSAGE_TEXT;
          outcome := 'error'; claim := NULL; sandbox := NULL; has_hooks := false;
          pool_recording := NULL;
          EXIT;
      END;
    END LOOP;

    IF outcome IN ('active', 'pending') THEN
      -- A new claim, committed with its subtransaction: count it (another tenant's run first).
      IF v_count_tenant IS DISTINCT FROM it->>'tenant_id' THEN
        IF v_count_delta > 0 THEN
          UPDATE tenants t SET live_claims = t.live_claims + v_count_delta
           WHERE t.id = v_count_tenant;
        END IF;
        v_count_tenant := it->>'tenant_id';
        v_count_delta := 0;
      END IF;
      v_count_delta := v_count_delta + 1;
    ELSIF outcome IS NULL THEN
      outcome := 'error'; err_code := '40001';
      err_message := 'the claim kept conflicting with concurrent requests';
    ELSIF outcome IN ('replay', 'reconnect') THEN
      claim := to_jsonb(v_claim);
      sandbox := (SELECT to_jsonb(s) - 'guest_token_ciphertext' FROM sandboxes s
                   WHERE s.id = v_claim.sandbox_id);
    END IF;
    RETURN NEXT;
  END LOOP;
  IF v_count_delta > 0 THEN
    UPDATE tenants t SET live_claims = t.live_claims + v_count_delta WHERE t.id = v_count_tenant;
  END IF;
  PERFORM set_config('cubicle.live_claims_counter', '', true);
END;
$$;
