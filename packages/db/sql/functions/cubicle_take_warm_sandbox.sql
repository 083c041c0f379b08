-- cubicle_take_warm_sandbox is the one warm pick: it marks the oldest warm sandbox of the pool's
-- given generation claimed and returns it (a row of NULLs when none is free). SKIP LOCKED lets
-- concurrent claims each take a different sandbox without waiting on one another; the state
-- check in the UPDATE makes a double claim impossible. Rows this transaction already claimed are
-- no longer 'warm', so the next call in the same transaction takes the next one.
CREATE OR REPLACE FUNCTION cubicle_take_warm_sandbox(p_pool_id text, p_generation int,
                                                     p_now timestamptz)
RETURNS sandboxes
LANGUAGE plpgsql AS $$
DECLARE
  v_sandbox sandboxes%ROWTYPE;
BEGIN
  UPDATE sandboxes s
     SET state = 'claimed', state_reason = 'claimed', claimed_at = p_now, updated_at = p_now
   WHERE s.id = (
           SELECT w.id FROM sandboxes w
            WHERE w.pool_id = p_pool_id AND w.state = 'warm' AND w.generation = p_generation
            ORDER BY w.created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     AND s.state = 'warm'
  RETURNING s.* INTO v_sandbox;
  RETURN v_sandbox;
END;
$$;
