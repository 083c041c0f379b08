-- cubicle_claim_expiry is the one rule for a claim's TTL deadline: the requested TTL from the
-- moment the claim becomes active, never past the pool's maximum lifetime from that moment.
-- Used for claims that take a warm sandbox at once (cubicle_claim_batch) and for pending claims
-- that get one later (cubicle_fulfil_pending); a pending claim's waiting time is not charged.
CREATE OR REPLACE FUNCTION cubicle_claim_expiry(p_now timestamptz, p_ttl_seconds int,
                                                p_max_lifetime_seconds int)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT LEAST(p_now + make_interval(secs => p_ttl_seconds),
               p_now + make_interval(secs => p_max_lifetime_seconds))
$$;
