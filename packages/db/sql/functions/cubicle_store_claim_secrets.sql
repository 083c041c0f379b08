-- cubicle_store_claim_secrets writes the sealed secrets a claim request item carries
-- (`secrets`: [{id, name, ciphertext, nonce, wrapped_key (base64), key_id}]) to its claim, in
-- the caller's transaction: cubicle_claim_batch calls it for every outcome that answers with a
-- claim, so the claim and its secrets commit together in one round trip. A name the claim
-- already has is replaced (the request says last what the claim holds); a released claim takes
-- none. Names within one item are unique (the API refuses duplicates before sealing), so the
-- upsert never meets one row twice.
CREATE OR REPLACE FUNCTION cubicle_store_claim_secrets(p_item jsonb, p_claim claims)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF jsonb_typeof(p_item->'secrets') IS DISTINCT FROM 'array' OR p_claim.id IS NULL
     OR p_claim.status = 'released' THEN
    RETURN;
  END IF;
  INSERT INTO claim_secrets (id, tenant_id, claim_id, name, ciphertext, nonce, wrapped_key, key_id)
  SELECT s->>'id', p_claim.tenant_id, p_claim.id, s->>'name', decode(s->>'ciphertext', 'base64'),
         decode(s->>'nonce', 'base64'), decode(s->>'wrapped_key', 'base64'), s->>'key_id'
    FROM jsonb_array_elements(p_item->'secrets') s
  ON CONFLICT (claim_id, name) DO UPDATE
    SET ciphertext = EXCLUDED.ciphertext, nonce = EXCLUDED.nonce,
        wrapped_key = EXCLUDED.wrapped_key, key_id = EXCLUDED.key_id;
END;
$$;
