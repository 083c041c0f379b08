-- Where a pool's sandboxes run on the kubernetes/kubevirt backends (runtime class, node
-- selector, tolerations; the API's `kubernetes` section). '{}' means none.
ALTER TABLE "pools" ADD COLUMN "kubernetes" JSONB NOT NULL DEFAULT '{}';
