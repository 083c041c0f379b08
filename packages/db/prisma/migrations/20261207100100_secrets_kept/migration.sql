-- Claims that ended before cubicle_forget_claim_secrets existed: their sealed secrets go now.
DELETE FROM claim_secrets cs USING claims c WHERE c.id = cs.claim_id AND c.status = 'released';

-- Who may name a stored secret in a claim or a run: admin keys only unless an admin opens it to
-- members. Existing secrets become admin-only (the safe reading of "no setting").
ALTER TABLE "tenant_secrets" ADD COLUMN "usable_by" TEXT NOT NULL DEFAULT 'admins';
ALTER TABLE "tenant_secrets" ADD CONSTRAINT "tenant_secrets_usable_by_check"
  CHECK ("usable_by" IN ('admins', 'members'));
