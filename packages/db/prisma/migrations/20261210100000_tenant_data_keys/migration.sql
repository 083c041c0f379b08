-- Tenant data keys (issue 34): each tenant's objects in the object store are sealed under a
-- random 32-byte data key of its own, kept here sealed by the keyring (sealBytes, aad naming the
-- tenant). One row per tenant, made on first use; replicas racing to make it insert with
-- ON CONFLICT DO NOTHING and all read back the one that won. Deleting the tenant drops its key,
-- which leaves its objects unreadable.
CREATE TABLE "tenant_data_keys" (
    "tenant_id" TEXT NOT NULL,
    "wrapped_key" BYTEA NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tenant_data_keys_pkey" PRIMARY KEY ("tenant_id"),
    CONSTRAINT "tenant_data_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
