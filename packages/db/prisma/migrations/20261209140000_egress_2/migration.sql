-- Egress denials in usage (issue 32): usage_hourly counts the denied attempts of each pool and
-- hour (the sum of egress_events.count of its 'denied' lines whose minute falls in the hour).
ALTER TABLE "usage_hourly" ADD COLUMN "egress_denials" INTEGER NOT NULL DEFAULT 0;
-- The rollup reads denials by minute over its window of hours.
CREATE INDEX "egress_events_denied_minute_idx" ON "egress_events"("minute") WHERE "verdict" = 'denied';
