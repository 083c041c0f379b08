-- Egress policy (issue 32).
-- pools.egress: the pool's policy as the contract parsed it (EgressPolicy: mode, allow, deny);
-- {} follows the installation default (the API shows null). It is not part of the sandbox
-- template: a change applies to running sandboxes through the egress point, never rolls them.
ALTER TABLE "pools" ADD COLUMN "egress" JSONB NOT NULL DEFAULT '{}';
-- claims.egress: the claim's narrowing as given at create (EgressNarrowing); NULL = none.
ALTER TABLE "claims" ADD COLUMN "egress" JSONB;

-- egress_events: what the egress point reported, collapsed per claim, destination, rule and
-- minute (a retry loop is one row with a count). `verdict` 'denied' rows are the API's
-- `egress.denied` events; 'allowed' rows only feed the Network tab's destination counts.
-- Unknown parts of a destination are '' / -1 (not NULL) so the collapse key is a plain unique index.
CREATE TABLE "egress_events" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "claim_id" TEXT NOT NULL,
    "pool_id" TEXT NOT NULL,
    "sandbox_id" TEXT,
    "verdict" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "first_at" TIMESTAMPTZ(3) NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,
    "protocol" TEXT NOT NULL,
    "name" TEXT NOT NULL DEFAULT '',
    "ip" TEXT NOT NULL DEFAULT '',
    "port" INTEGER NOT NULL DEFAULT -1,
    "rule" TEXT NOT NULL,
    "process" TEXT,

    CONSTRAINT "egress_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "egress_events_verdict_check" CHECK ("verdict" IN ('allowed', 'denied')),
    CONSTRAINT "egress_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "egress_events_claim_id_fkey" FOREIGN KEY ("claim_id") REFERENCES "claims"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The collapse key: one row per claim, minute and destination with its rule.
CREATE UNIQUE INDEX "egress_events_collapse_key" ON "egress_events"("claim_id", "minute", "verdict", "protocol", "name", "ip", "port", "rule");
-- A claim's event page: newest first by id.
CREATE INDEX "egress_events_claim_id_id_idx" ON "egress_events"("claim_id", "id");
