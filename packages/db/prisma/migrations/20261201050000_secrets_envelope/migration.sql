-- Envelope encryption for secrets: each value is sealed (AES-256-GCM) with a random data key,
-- and the data key is sealed with the keyring's current master key (`key_id`). Rotation re-wraps
-- only `wrapped_key`; the value's ciphertext never changes. Nothing has written claim_secrets
-- before this migration, so the new column needs no default.
ALTER TABLE "claim_secrets" ADD COLUMN "wrapped_key" BYTEA NOT NULL;

-- Tenant-level stored secrets: write-only and versioned (every write is a new version; the
-- newest is the one a claim or run receives). A claim or run references them by name.
CREATE TABLE "tenant_secrets" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "nonce" BYTEA NOT NULL,
    "wrapped_key" BYTEA NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_secrets_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "tenant_secrets_tenant_id_name_version_key" ON "tenant_secrets"("tenant_id", "name", "version");

ALTER TABLE "tenant_secrets" ADD CONSTRAINT "tenant_secrets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
