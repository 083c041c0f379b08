-- Snapshots (issue 34): a claim's files (its home, or paths it named) packed by the guest and kept
-- sealed in the tenant's object store under `snapshots/<id>/`. One row per snapshot; the objects
-- are written before the row turns `ready`, and deleted before the row goes, so a `ready` row
-- always has its objects. A `creating` row left by a crash is removed by the retention sweep with
-- whatever objects it had written.
CREATE TYPE "snapshot_status" AS ENUM ('creating', 'ready', 'failed');

CREATE TABLE "snapshots" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT,
    "status" "snapshot_status" NOT NULL DEFAULT 'creating',
    "paths" TEXT[] NOT NULL,
    -- The source claim and pool as they were; no foreign key: a snapshot outlives its claim.
    "source_claim_id" TEXT NOT NULL,
    "source_pool" TEXT NOT NULL,
    "source_pool_id" TEXT NOT NULL,
    "size_bytes" BIGINT NOT NULL DEFAULT 0,
    "stored_bytes" BIGINT NOT NULL DEFAULT 0,
    "file_count" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ready_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "snapshots_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "snapshots_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Lists page newest first by id within a tenant.
CREATE INDEX "snapshots_tenant_id_id_idx" ON "snapshots"("tenant_id", "id");
-- A name, when given, names one snapshot of the tenant (409 already_exists).
CREATE UNIQUE INDEX "snapshots_tenant_id_name_key" ON "snapshots"("tenant_id", "name") WHERE "name" IS NOT NULL;
-- The retention sweep reads by deadline.
CREATE INDEX "snapshots_expires_at_idx" ON "snapshots"("expires_at");

-- Per-tenant snapshot limits, set by the operator like the other quotas: the stored bytes of all
-- the tenant's snapshots (10 GiB) and how long one is kept (30 days).
ALTER TABLE "tenants" ADD COLUMN "max_snapshot_bytes" BIGINT NOT NULL DEFAULT 10737418240;
ALTER TABLE "tenants" ADD COLUMN "snapshot_retention_days" INTEGER NOT NULL DEFAULT 30;
