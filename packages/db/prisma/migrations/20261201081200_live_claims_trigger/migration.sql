-- tenants.live_claims follows every claim write from now on (cubicle_count_live_claims), and is
-- filled from the claims as they stand. The share lock holds claim writes back while the count
-- is taken and the triggers are created, so no change falls between the two.
LOCK TABLE "claims" IN SHARE ROW EXCLUSIVE MODE;

UPDATE "tenants" t
   SET "live_claims" = (SELECT count(*)::int FROM "claims" c
                         WHERE c."tenant_id" = t."id" AND c."status" IN ('pending', 'active'));

CREATE TRIGGER "claims_count_live_insert_delete"
  AFTER INSERT OR DELETE ON "claims"
  FOR EACH ROW EXECUTE FUNCTION cubicle_count_live_claims();

-- Only a status change that crosses live/ended calls the function (pending → active does not).
CREATE TRIGGER "claims_count_live_update"
  AFTER UPDATE OF "status" ON "claims"
  FOR EACH ROW
  WHEN ((OLD."status" IN ('pending', 'active')) IS DISTINCT FROM (NEW."status" IN ('pending', 'active')))
  EXECUTE FUNCTION cubicle_count_live_claims();
