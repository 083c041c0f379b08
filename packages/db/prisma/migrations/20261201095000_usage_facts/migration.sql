-- Usage facts, second step (issue 18): warm resources as facts, foreign keys on usage_hourly,
-- viewer connections and the screenshots actions were measured in.

-- The CPU and memory a sandbox was provisioned with, copied from its pool when the row is
-- inserted (provisioning starts from that row). Warm core- and GiB-seconds multiply each warm
-- interval by these, so a later change of the pool's size never rewrites past usage.
ALTER TABLE "sandboxes" ADD COLUMN "cpu_millis" INTEGER, ADD COLUMN "memory_mb" INTEGER;

-- Rows older than this migration have no recorded size: they take the pool's size of today,
-- the only estimate left in usage, and only for sandboxes that existed before it.
UPDATE "sandboxes" s SET "cpu_millis" = p."cpu_millis", "memory_mb" = p."memory_mb"
  FROM "pools" p WHERE p."id" = s."pool_id";

CREATE FUNCTION cubicle_sandbox_resources() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT p.cpu_millis, p.memory_mb INTO NEW.cpu_millis, NEW.memory_mb
    FROM pools p WHERE p.id = NEW.pool_id;
  RETURN NEW;
END $$;

CREATE TRIGGER sandboxes_resources_insert BEFORE INSERT ON "sandboxes"
  FOR EACH ROW WHEN (NEW.cpu_millis IS NULL OR NEW.memory_mb IS NULL)
  EXECUTE FUNCTION cubicle_sandbox_resources();

-- usage_hourly rows belong to a tenant and a pool. Pools are soft-deleted (deleted_at), so a
-- deleted pool keeps its usage; only deleting the tenant (or a pool row, which nothing does
-- but a tenant's deletion) removes it. usage_dirty keeps no key: its rows live for at most one
-- rollup and are appended from triggers where a key check would cost every claim write.
ALTER TABLE "usage_hourly"
  ADD CONSTRAINT "usage_hourly_tenant_id_fkey" FOREIGN KEY ("tenant_id")
    REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  ADD CONSTRAINT "usage_hourly_pool_id_fkey" FOREIGN KEY ("pool_id")
    REFERENCES "pools"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One row per viewer stream the API admitted: inserted when it opens, closed when it ends.
-- disconnected_at stays NULL when the API process died with the stream open.
CREATE TABLE "viewer_connections" (
  "id" BIGSERIAL NOT NULL,
  "tenant_id" TEXT NOT NULL,
  "claim_id" TEXT NOT NULL,
  "ticket_id" TEXT NOT NULL,
  "mode" "viewer_mode" NOT NULL,
  "connected_at" TIMESTAMPTZ(3) NOT NULL,
  "disconnected_at" TIMESTAMPTZ(3),
  "close_reason" TEXT,
  CONSTRAINT "viewer_connections_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "viewer_connections_claim_id_connected_at_idx"
  ON "viewer_connections" ("claim_id", "connected_at");
CREATE INDEX "viewer_connections_tenant_id_idx" ON "viewer_connections" ("tenant_id");
ALTER TABLE "viewer_connections"
  ADD CONSTRAINT "viewer_connections_tenant_id_fkey" FOREIGN KEY ("tenant_id")
    REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  ADD CONSTRAINT "viewer_connections_claim_id_fkey" FOREIGN KEY ("claim_id")
    REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  ADD CONSTRAINT "viewer_connections_ticket_id_fkey" FOREIGN KEY ("ticket_id")
    REFERENCES "viewer_tickets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Window screenshots (PNG) the guest returned for a claim, kept so the claim timeline can show
-- what a pixel action was aimed at. Only the latest per window is kept unless an action quoted
-- it (is_referenced): pixel input must quote its window's latest screenshot, so an older,
-- unquoted one can never be referenced again. Claims holding secrets keep none.
CREATE TABLE "claim_screenshots" (
  "claim_id" TEXT NOT NULL,
  "screenshot_id" TEXT NOT NULL,
  "tenant_id" TEXT NOT NULL,
  "window_id" BIGINT NOT NULL,
  "width" INTEGER NOT NULL,
  "height" INTEGER NOT NULL,
  "data" BYTEA NOT NULL,
  "is_referenced" BOOLEAN NOT NULL DEFAULT false,
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "claim_screenshots_pkey" PRIMARY KEY ("claim_id", "screenshot_id")
);
CREATE INDEX "claim_screenshots_created_at_idx" ON "claim_screenshots" ("created_at");
CREATE INDEX "claim_screenshots_tenant_id_idx" ON "claim_screenshots" ("tenant_id");
ALTER TABLE "claim_screenshots"
  ADD CONSTRAINT "claim_screenshots_tenant_id_fkey" FOREIGN KEY ("tenant_id")
    REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
  ADD CONSTRAINT "claim_screenshots_claim_id_fkey" FOREIGN KEY ("claim_id")
    REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;
