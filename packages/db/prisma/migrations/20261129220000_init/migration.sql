-- CreateEnum
CREATE TYPE "api_key_role" AS ENUM ('admin', 'member');

-- CreateEnum
CREATE TYPE "backend" AS ENUM ('local', 'kubernetes', 'kubevirt');

-- CreateEnum
CREATE TYPE "pool_state" AS ENUM ('active', 'draining');

-- CreateEnum
CREATE TYPE "sandbox_state" AS ENUM ('provisioning', 'warm', 'claimed', 'releasing', 'deleted', 'failed');

-- CreateEnum
CREATE TYPE "claim_status" AS ENUM ('pending', 'active', 'released');

-- CreateEnum
CREATE TYPE "release_reason" AS ENUM ('released_by_client', 'ttl_expired', 'idle_timeout', 'max_lifetime', 'pool_deleted', 'sandbox_failed', 'provision_timeout');

-- CreateEnum
CREATE TYPE "viewer_mode" AS ENUM ('view', 'control');

-- CreateEnum
CREATE TYPE "run_status" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

-- CreateTable
CREATE TABLE "tenants" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "max_pools" INTEGER NOT NULL DEFAULT 20,
    "max_sandboxes" INTEGER NOT NULL DEFAULT 100,
    "max_concurrent_claims" INTEGER NOT NULL DEFAULT 100,
    "requests_per_minute" INTEGER NOT NULL DEFAULT 6000,
    "allowed_embed_origins" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "api_key_role" NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pools" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "image" TEXT NOT NULL,
    "backend" "backend" NOT NULL,
    "cpu_millis" INTEGER NOT NULL,
    "memory_mb" INTEGER NOT NULL,
    "min_size" INTEGER NOT NULL,
    "initial_size" INTEGER NOT NULL,
    "max_size" INTEGER NOT NULL,
    "claim_ttl_seconds" INTEGER NOT NULL,
    "max_claim_lifetime_seconds" INTEGER NOT NULL,
    "idle_timeout_seconds" INTEGER,
    "env" JSONB NOT NULL DEFAULT '{}',
    "state" "pool_state" NOT NULL DEFAULT 'active',
    "generation" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "pools_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sandboxes" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "state" "sandbox_state" NOT NULL DEFAULT 'provisioning',
    "backend" "backend" NOT NULL,
    "image" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "backend_ref" TEXT,
    "guest_endpoint" TEXT,
    "vnc_endpoint" TEXT,
    "guest_token_ciphertext" BYTEA,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "ready_at" TIMESTAMPTZ(3),
    "claimed_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "sandboxes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "claims" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "sandbox_id" TEXT,
    "name" TEXT NOT NULL,
    "status" "claim_status" NOT NULL DEFAULT 'pending',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "ttl_seconds" INTEGER NOT NULL,
    "idle_timeout_seconds" INTEGER,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "max_expires_at" TIMESTAMPTZ(3) NOT NULL,
    "last_heartbeat_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),
    "release_reason" "release_reason",
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "claims_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "claim_secrets" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "nonce" BYTEA NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "claim_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "viewer_tickets" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "sandbox_id" TEXT NOT NULL,
    "mode" "viewer_mode" NOT NULL,
    "created_by_key_id" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "viewer_tickets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runs" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "status" "run_status" NOT NULL DEFAULT 'queued',
    "argv" TEXT[],
    "cwd" TEXT,
    "env" JSONB NOT NULL DEFAULT '{}',
    "secret_names" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "timeout_seconds" INTEGER NOT NULL,
    "exit_code" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_events" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "action_records" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "sandbox_id" TEXT NOT NULL,
    "operation" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "result" JSONB NOT NULL,
    "effect" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "action_records_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "idempotency_keys" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response_status" INTEGER,
    "response_body" JSONB,
    "resource_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_events" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "actor_type" TEXT NOT NULL,
    "api_key_id" TEXT,
    "key_prefix" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT,
    "result" TEXT NOT NULL,
    "status_code" INTEGER,
    "request_id" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys"("tenant_id");

-- CreateIndex
CREATE INDEX "pools_tenant_id_idx" ON "pools"("tenant_id");

-- CreateIndex
CREATE INDEX "sandboxes_pool_id_state_idx" ON "sandboxes"("pool_id", "state");

-- CreateIndex
CREATE INDEX "sandboxes_tenant_id_state_idx" ON "sandboxes"("tenant_id", "state");

-- CreateIndex
CREATE INDEX "claims_tenant_id_status_idx" ON "claims"("tenant_id", "status");

-- CreateIndex
CREATE INDEX "claims_status_expires_at_idx" ON "claims"("status", "expires_at");

-- CreateIndex
CREATE INDEX "claim_secrets_tenant_id_idx" ON "claim_secrets"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "claim_secrets_claim_id_name_key" ON "claim_secrets"("claim_id", "name");

-- CreateIndex
CREATE INDEX "viewer_tickets_claim_id_idx" ON "viewer_tickets"("claim_id");

-- CreateIndex
CREATE INDEX "viewer_tickets_tenant_id_idx" ON "viewer_tickets"("tenant_id");

-- CreateIndex
CREATE INDEX "runs_claim_id_idx" ON "runs"("claim_id");

-- CreateIndex
CREATE INDEX "runs_tenant_id_idx" ON "runs"("tenant_id");

-- CreateIndex
CREATE INDEX "run_events_tenant_id_idx" ON "run_events"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "run_events_run_id_seq_key" ON "run_events"("run_id", "seq");

-- CreateIndex
CREATE INDEX "action_records_claim_id_created_at_idx" ON "action_records"("claim_id", "created_at");

-- CreateIndex
CREATE INDEX "action_records_tenant_id_idx" ON "action_records"("tenant_id");

-- CreateIndex
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "idempotency_keys_tenant_id_scope_key_key" ON "idempotency_keys"("tenant_id", "scope", "key");

-- CreateIndex
CREATE INDEX "audit_events_tenant_id_created_at_idx" ON "audit_events"("tenant_id", "created_at");

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pools" ADD CONSTRAINT "pools_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sandboxes" ADD CONSTRAINT "sandboxes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sandboxes" ADD CONSTRAINT "sandboxes_pool_id_fkey" FOREIGN KEY ("pool_id") REFERENCES "pools"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claims" ADD CONSTRAINT "claims_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claims" ADD CONSTRAINT "claims_pool_id_fkey" FOREIGN KEY ("pool_id") REFERENCES "pools"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claims" ADD CONSTRAINT "claims_sandbox_id_fkey" FOREIGN KEY ("sandbox_id") REFERENCES "sandboxes"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_secrets" ADD CONSTRAINT "claim_secrets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "claim_secrets" ADD CONSTRAINT "claim_secrets_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "viewer_tickets" ADD CONSTRAINT "viewer_tickets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "viewer_tickets" ADD CONSTRAINT "viewer_tickets_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "viewer_tickets" ADD CONSTRAINT "viewer_tickets_sandbox_id_fkey" FOREIGN KEY ("sandbox_id") REFERENCES "sandboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "runs" ADD CONSTRAINT "runs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "runs" ADD CONSTRAINT "runs_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "action_records" ADD CONSTRAINT "action_records_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "action_records" ADD CONSTRAINT "action_records_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "action_records" ADD CONSTRAINT "action_records_sandbox_id_fkey" FOREIGN KEY ("sandbox_id") REFERENCES "sandboxes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_events" ADD CONSTRAINT "audit_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Cubicle: invariants Prisma's schema language cannot express. The database is the source of
-- truth for claims, so these are what make double claims impossible under concurrency.

-- One live (pending or active) claim per name per pool: a second claim with the name reconnects.
CREATE UNIQUE INDEX "claims_live_name_key" ON "claims"("tenant_id", "pool_id", "name") WHERE "status" <> 'released';

-- A sandbox is held by at most one active claim, ever (sandboxes are never reused).
CREATE UNIQUE INDEX "claims_sandbox_id_key" ON "claims"("sandbox_id") WHERE "sandbox_id" IS NOT NULL;

-- Pool names are unique per tenant among pools that are not deleted.
CREATE UNIQUE INDEX "pools_tenant_id_name_live_key" ON "pools"("tenant_id", "name") WHERE "deleted_at" IS NULL;

-- Fast pick of a warm sandbox per pool (claim path, FOR UPDATE SKIP LOCKED).
CREATE INDEX "sandboxes_warm_idx" ON "sandboxes"("pool_id", "created_at") WHERE "state" = 'warm';

ALTER TABLE "pools" ADD CONSTRAINT "pools_autoscaling_check" CHECK ("min_size" >= 0 AND "min_size" <= "initial_size" AND "initial_size" <= "max_size");
ALTER TABLE "pools" ADD CONSTRAINT "pools_ttl_check" CHECK ("claim_ttl_seconds" > 0 AND "claim_ttl_seconds" <= "max_claim_lifetime_seconds");
ALTER TABLE "claims" ADD CONSTRAINT "claims_release_check" CHECK (("status" = 'released') = ("released_at" IS NOT NULL AND "release_reason" IS NOT NULL));
ALTER TABLE "claims" ADD CONSTRAINT "claims_active_sandbox_check" CHECK ("status" <> 'active' OR "sandbox_id" IS NOT NULL);
ALTER TABLE "claims" ADD CONSTRAINT "claims_expiry_check" CHECK ("expires_at" <= "max_expires_at");
