-- Usage metering (issue 18). Usage is computed from facts already kept on claims, sandboxes and
-- runs; the rollup (control-plane usage/rollup-usage.ts) recomputes whole hours from them and
-- replaces those hours in usage_hourly, so running it twice never double-counts.

-- When a claim became active (got its desktop). A claim waits pending before that, and its wait
-- is not usage. Set by trigger so every path that activates a claim (the claim batch function,
-- fulfilment of pending claims, any later lifecycle module) records it from the same write:
-- last_heartbeat_at is written with the activation's own clock (the injected one in tests).
ALTER TABLE "claims" ADD COLUMN "activated_at" TIMESTAMPTZ(3);

UPDATE "claims" c SET "activated_at" = s."claimed_at"
  FROM "sandboxes" s WHERE s."id" = c."sandbox_id" AND c."status" <> 'pending';

CREATE FUNCTION cubicle_claim_activated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.activated_at := NEW.last_heartbeat_at;
  RETURN NEW;
END $$;

CREATE TRIGGER claims_activated_at_insert BEFORE INSERT ON "claims"
  FOR EACH ROW WHEN (NEW.status = 'active' AND NEW.activated_at IS NULL)
  EXECUTE FUNCTION cubicle_claim_activated_at();
CREATE TRIGGER claims_activated_at_update BEFORE UPDATE OF "status" ON "claims"
  FOR EACH ROW WHEN (NEW.status = 'active' AND NEW.activated_at IS NULL)
  EXECUTE FUNCTION cubicle_claim_activated_at();

CREATE INDEX "claims_pool_id_activated_at_idx" ON "claims" ("pool_id", "activated_at");

-- Hourly usage per tenant and pool. Seconds are exact sums of interval overlaps with the hour.
CREATE TABLE "usage_hourly" (
  "tenant_id" TEXT NOT NULL,
  "pool_id" TEXT NOT NULL,
  "hour" TIMESTAMPTZ(3) NOT NULL,
  "claims" INTEGER NOT NULL DEFAULT 0,
  "claim_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "warm_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "warm_cpu_core_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "warm_memory_gib_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "run_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0,
  "runs" INTEGER NOT NULL DEFAULT 0,
  "computed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "usage_hourly_pkey" PRIMARY KEY ("tenant_id", "hour", "pool_id")
);
CREATE INDEX "usage_hourly_pool_id_hour_idx" ON "usage_hourly" ("pool_id", "hour");

-- The rollup's progress: the fact-clock time of the last two runs. The next run recomputes every
-- hour from the older one on (a fact committed while the last run read its snapshot is covered).
CREATE TABLE "usage_rollup_state" (
  "id" TEXT NOT NULL,
  "rolled_to" TIMESTAMPTZ(3),
  "previous_rolled_to" TIMESTAMPTZ(3),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "usage_rollup_state_pkey" PRIMARY KEY ("id")
);
INSERT INTO "usage_rollup_state" ("id") VALUES ('usage');

-- Late facts: a time written after the rollup already passed its hour marks that span dirty. Rows
-- are appended only (no unique key, so concurrent writers never wait on each other) and removed
-- by the rollup transaction that recomputed them.
CREATE TABLE "usage_dirty" (
  "id" BIGSERIAL NOT NULL,
  "pool_id" TEXT NOT NULL,
  "from_at" TIMESTAMPTZ(3) NOT NULL,
  "to_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "usage_dirty_pkey" PRIMARY KEY ("id")
);

-- cubicle_usage_mark appends a dirty span when it starts before the hour the last rollup reached.
-- A fact written while a rollup runs saw the older rolled_to; the next rollup starts at that
-- older hour (previous_rolled_to), so the fact is covered either way.
CREATE FUNCTION cubicle_usage_mark(p_pool_id text, p_from timestamptz, p_to timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_rolled timestamptz;
BEGIN
  IF p_from IS NULL THEN RETURN; END IF;
  SELECT rolled_to INTO v_rolled FROM usage_rollup_state WHERE id = 'usage';
  IF v_rolled IS NULL OR p_from >= date_trunc('hour', v_rolled, 'UTC') THEN RETURN; END IF;
  INSERT INTO usage_dirty (pool_id, from_at, to_at)
    VALUES (p_pool_id, p_from, GREATEST(p_from, COALESCE(p_to, p_from)));
END $$;

CREATE FUNCTION cubicle_usage_mark_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cubicle_usage_mark(NEW.pool_id,
    LEAST(NEW.activated_at, NEW.released_at,
          CASE WHEN TG_OP = 'UPDATE' THEN LEAST(OLD.activated_at, OLD.released_at) END),
    GREATEST(NEW.activated_at, NEW.released_at,
             CASE WHEN TG_OP = 'UPDATE' THEN GREATEST(OLD.activated_at, OLD.released_at) END));
  RETURN NULL;
END $$;
CREATE TRIGGER claims_usage_insert AFTER INSERT ON "claims"
  FOR EACH ROW WHEN (NEW.activated_at IS NOT NULL)
  EXECUTE FUNCTION cubicle_usage_mark_claim();
CREATE TRIGGER claims_usage_update AFTER UPDATE OF "activated_at", "released_at" ON "claims"
  FOR EACH ROW WHEN (NEW.activated_at IS DISTINCT FROM OLD.activated_at
                     OR NEW.released_at IS DISTINCT FROM OLD.released_at)
  EXECUTE FUNCTION cubicle_usage_mark_claim();

CREATE FUNCTION cubicle_usage_mark_sandbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM cubicle_usage_mark(NEW.pool_id,
    LEAST(NEW.ready_at, NEW.claimed_at, NEW.ended_at,
          CASE WHEN TG_OP = 'UPDATE' THEN LEAST(OLD.ready_at, OLD.claimed_at, OLD.ended_at) END),
    GREATEST(NEW.ready_at, NEW.claimed_at, NEW.ended_at,
             CASE WHEN TG_OP = 'UPDATE' THEN GREATEST(OLD.ready_at, OLD.claimed_at, OLD.ended_at) END));
  RETURN NULL;
END $$;
CREATE TRIGGER sandboxes_usage_insert AFTER INSERT ON "sandboxes"
  FOR EACH ROW WHEN (NEW.ready_at IS NOT NULL)
  EXECUTE FUNCTION cubicle_usage_mark_sandbox();
CREATE TRIGGER sandboxes_usage_update AFTER UPDATE OF "ready_at", "claimed_at", "ended_at" ON "sandboxes"
  FOR EACH ROW WHEN (NEW.ready_at IS DISTINCT FROM OLD.ready_at
                     OR NEW.claimed_at IS DISTINCT FROM OLD.claimed_at
                     OR NEW.ended_at IS DISTINCT FROM OLD.ended_at)
  EXECUTE FUNCTION cubicle_usage_mark_sandbox();

CREATE FUNCTION cubicle_usage_mark_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_pool text;
BEGIN
  SELECT pool_id INTO v_pool FROM claims WHERE id = NEW.claim_id;
  PERFORM cubicle_usage_mark(v_pool,
    LEAST(NEW.started_at, NEW.finished_at,
          CASE WHEN TG_OP = 'UPDATE' THEN LEAST(OLD.started_at, OLD.finished_at) END),
    GREATEST(NEW.started_at, NEW.finished_at,
             CASE WHEN TG_OP = 'UPDATE' THEN GREATEST(OLD.started_at, OLD.finished_at) END));
  RETURN NULL;
END $$;
CREATE TRIGGER runs_usage_insert AFTER INSERT ON "runs"
  FOR EACH ROW WHEN (NEW.started_at IS NOT NULL)
  EXECUTE FUNCTION cubicle_usage_mark_run();
CREATE TRIGGER runs_usage_update AFTER UPDATE OF "started_at", "finished_at" ON "runs"
  FOR EACH ROW WHEN (NEW.started_at IS DISTINCT FROM OLD.started_at
                     OR NEW.finished_at IS DISTINCT FROM OLD.finished_at)
  EXECUTE FUNCTION cubicle_usage_mark_run();
