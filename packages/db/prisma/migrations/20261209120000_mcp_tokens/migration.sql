-- MCP tokens (issue 33): claim-scoped bearer tokens for the claim's MCP endpoint. Only the id is
-- stored; the signed token exists in the mint response alone. `tools` empty means every tool.
CREATE TABLE "mcp_tokens" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "tools" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_by_key_id" TEXT,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_tokens_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "mcp_tokens_claim_id_idx" ON "mcp_tokens"("claim_id");

CREATE INDEX "mcp_tokens_tenant_id_idx" ON "mcp_tokens"("tenant_id");

ALTER TABLE "mcp_tokens" ADD CONSTRAINT "mcp_tokens_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "mcp_tokens" ADD CONSTRAINT "mcp_tokens_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE;
