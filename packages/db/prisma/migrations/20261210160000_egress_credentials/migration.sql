-- Credentials injected at egress (issue 32). A stored secret's version may bind it to hosts
-- (SecretInjection {hosts, header, format}); the newest version's binding is the one in force.
ALTER TABLE "tenant_secrets" ADD COLUMN "inject" JSONB;

-- The installation's egress CA: the egress point signs bound hosts' certificates with it and
-- sandboxes trust its certificate. One row (id 'installation'); the private key rests sealed like
-- a secret value (envelope with the keyring, aad 'egress-ca:<id>'), never in a sandbox.
CREATE TABLE "egress_cas" (
    "id" TEXT NOT NULL,
    "cert_pem" TEXT NOT NULL,
    "key_ciphertext" BYTEA NOT NULL,
    "key_nonce" BYTEA NOT NULL,
    "wrapped_key" BYTEA NOT NULL,
    "key_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "egress_cas_pkey" PRIMARY KEY ("id")
);
