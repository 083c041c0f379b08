-- Egress link of a sandbox (issue 32). The local backend links a sandbox to the egress point
-- only when its policy at provisioning is not `none`; a desktop without a link cannot gain one,
-- so the API tells a claim's holder (ClaimEgress.link). NULL: the backend does not say.
ALTER TABLE "sandboxes" ADD COLUMN "egress_link" BOOLEAN;
