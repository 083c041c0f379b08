-- sandboxes.oom_kills: the processes the sandbox's memory limit has killed inside it, as the
-- worker last read them from the backend (issue 30 §2). The worker raises it with a guarded
-- UPDATE (`WHERE oom_kills < new`), so each rise is reported once however many workers read it.
ALTER TABLE "sandboxes" ADD COLUMN "oom_kills" INTEGER NOT NULL DEFAULT 0;
