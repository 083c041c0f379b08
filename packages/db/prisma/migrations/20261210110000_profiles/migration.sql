-- Persistent profiles (issue 34): a tenant's named home state (browser profiles, documents),
-- restored into a warm desktop at claim and saved back at release or on request. The files live
-- sealed in the tenant's object store under `profiles/<id>/` (content-addressed chunks under
-- `blobs/`, one manifest per version under `versions/`); this row is the pointer to the current
-- version, moved only after that version's chunks and manifest are stored, so a save cut short
-- (a worker killed mid-save) leaves the previous version whole.
CREATE TABLE "profiles" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    -- The tenant's own id for it (`cust-42`): what the API names.
    "name" TEXT NOT NULL,
    -- The current version (0: never saved) and its totals.
    "version" INTEGER NOT NULL DEFAULT 0,
    "size_bytes" BIGINT NOT NULL DEFAULT 0,
    "file_count" INTEGER NOT NULL DEFAULT 0,
    "saved_at" TIMESTAMPTZ(3),
    -- The claim holding it (one at a time; no foreign key: the hold outlives the claim until its
    -- release save has ended), the claim its current files were restored for, the last claim.
    "live_claim_id" TEXT,
    "restored_claim_id" TEXT,
    "last_claim_id" TEXT,
    "last_used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "profiles_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "profiles_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The tenant's id names one profile.
CREATE UNIQUE INDEX "profiles_tenant_id_name_key" ON "profiles"("tenant_id", "name");
-- A claim holds at most one profile; the release save finds it by the claim.
CREATE UNIQUE INDEX "profiles_live_claim_id_key" ON "profiles"("live_claim_id");
-- The retention sweep reads by last use.
CREATE INDEX "profiles_last_used_at_idx" ON "profiles"("last_used_at");

-- Per-tenant profile limits, set by the operator like the other quotas: the bytes of all the
-- tenant's profiles' current versions (10 GiB), and how many days an unused profile is kept.
ALTER TABLE "tenants" ADD COLUMN "max_profile_bytes" BIGINT NOT NULL DEFAULT 10737418240;
ALTER TABLE "tenants" ADD COLUMN "profile_retention_days" INTEGER NOT NULL DEFAULT 90;

-- The paths of the home a pool's profiles hold; empty: the default set (browsers, Documents,
-- Desktop, shell history).
ALTER TABLE "pools" ADD COLUMN "profile_paths" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
