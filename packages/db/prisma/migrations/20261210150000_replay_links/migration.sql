-- Replay links (issue 35): read-only share links to a claim's replay (video and timeline). Only
-- the id is stored; the signed token exists in the mint response alone.
CREATE TABLE "replay_links" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "created_by_key_id" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "replay_links_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "replay_links_claim_id_idx" ON "replay_links"("claim_id");

CREATE INDEX "replay_links_tenant_id_idx" ON "replay_links"("tenant_id");

ALTER TABLE "replay_links" ADD CONSTRAINT "replay_links_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "replay_links" ADD CONSTRAINT "replay_links_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;
