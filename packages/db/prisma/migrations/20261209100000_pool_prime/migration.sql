-- Primed pools (issue 38). pools.prime: the apps every warm desktop has open before a claim
-- takes it (the API's `prime`, JSON as the contract's PoolPrime); NULL primes nothing.
-- sandboxes.primed_windows: the windows those apps opened on the desktop, recorded when it
-- turned warm ([{app, window_id, title, pid}]); the claim answer lists them as `primed_windows`.
ALTER TABLE "pools" ADD COLUMN "prime" JSONB;
ALTER TABLE "sandboxes" ADD COLUMN "primed_windows" JSONB NOT NULL DEFAULT '[]';
