-- cubicle_claim_is_live is the one SQL rule for "the claim is live", the twin of isClaimLive in
-- packages/control-plane/src/lifecycle/claim-liveness.ts: active (it holds its sandbox) and its
-- TTL deadline not passed at p_now. A claim past its deadline is no longer live although the
-- reclaim sweep has not released it yet. Statements that filter on liveness call this instead of
-- comparing the status themselves (a test fails on a comparison outside the lifecycle), with the
-- caller's clock as p_now. A single-expression SQL function without STRICT: the planner inlines
-- it, so a statement keeps its index paths (the liveness integration test checks the plan and
-- that both twins agree).
CREATE OR REPLACE FUNCTION cubicle_claim_is_live(p_status claim_status, p_expires_at timestamptz,
                                                 p_now timestamptz)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_status = 'active' AND p_expires_at > p_now
$$;
