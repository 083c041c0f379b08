-- Run events are appended tens of thousands a second (issue 12: bench:runs), and each row paid
-- for more than its key: a surrogate id (a sequence call and a third index), an index on
-- tenant_id that no query reads, and a foreign-key check against tenants (a trigger per row).
-- (run_id, seq) is the key every reader uses, so it becomes the primary key; tenant_id stays as
-- a column, and deleting a tenant still deletes its events through runs (ON DELETE CASCADE).
ALTER TABLE "run_events" DROP CONSTRAINT "run_events_tenant_id_fkey";
DROP INDEX "run_events_tenant_id_idx";
ALTER TABLE "run_events" DROP CONSTRAINT "run_events_pkey";
ALTER TABLE "run_events" DROP COLUMN "id";
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_pkey" PRIMARY KEY USING INDEX "run_events_run_id_seq_key";
