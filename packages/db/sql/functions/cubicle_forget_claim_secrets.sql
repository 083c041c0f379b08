-- cubicle_forget_claim_secrets deletes a claim's sealed secrets in the transaction that ends it
-- (status → released), whatever path ends it: a release (cubicle_end_claim), TTL, idle or lifetime
-- expiry, a lost sandbox, a deleted pool, a test fixture. What ends with the claim is gone: no
-- ciphertext outlives it (a later leak of the keyring cannot open what is no longer there).
-- Writers that add a secret to a claim lock the claim row (FOR SHARE) and insert only while it is
-- active, so no row can be added after this ran. A run still going holds its values in the
-- worker's memory only; it is stopped with the claim.
CREATE OR REPLACE FUNCTION cubicle_forget_claim_secrets()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM claim_secrets cs WHERE cs.claim_id = NEW.id;
  RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS claims_forget_secrets ON claims;
CREATE TRIGGER claims_forget_secrets AFTER UPDATE OF status ON claims
  FOR EACH ROW WHEN (NEW.status = 'released' AND OLD.status IS DISTINCT FROM 'released')
  EXECUTE FUNCTION cubicle_forget_claim_secrets();
