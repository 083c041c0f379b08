-- A claim's secrets are written by the claim statement itself (cubicle_claim_batch), while the
-- tenant's row is locked for its quota: every per-row cost there is paid by every claim of the
-- tenant queued behind it (issue 12: bench:claim with secrets within 10 % of without). Two of
-- them bought nothing: the index on tenant_id (every reader gives claim_id first, which
-- claim_secrets_claim_id_name_key serves) and the foreign-key check against tenants (a trigger
-- and a row lock on the tenant row per secret; measured on a 32-claim burst of 4 batches with
-- two secrets each: 5.5 ms over a burst without secrets, 3.2 ms after this change). tenant_id
-- stays as a column for the readers' filter, and a deleted tenant's secrets still go with its
-- claims (ON DELETE CASCADE on claim_id).
ALTER TABLE "claim_secrets" DROP CONSTRAINT "claim_secrets_tenant_id_fkey";
DROP INDEX "claim_secrets_tenant_id_idx";
