import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sqlOf } from '@cubicle/db';
import {
  makeInjectionCa,
  type CredentialInjection,
  type EgressCredentials,
  type InjectionCa,
} from '@cubicle/egress';
import { openEnvelope, sealEnvelope, secretAad } from '../crypto/envelope.js';
import type { Resources } from '../resources.js';
import {
  insertEgressCa,
  selectBoundSecrets,
  selectEgressCa,
} from '../repositories/egress-credentials.js';

type CredentialDeps = Pick<Resources, 'db' | 'keyring'>;

/** The one CA row of an installation (a per-tenant CA would be another id). */
const INSTALLATION_CA = 'installation';
const caAad = (id: string) => `egress-ca:${id}`;

/** formatInjection puts the secret into its header's format (`Bearer {value}`). */
export const formatInjection = (format: string, value: string): string =>
  format.split('{value}').join(value);

/**
 * loadInjections opens a tenant's stored secrets bound to hosts (the newest version of each,
 * when it carries a binding) into what the egress point injects, with a fingerprint of the
 * bindings (names, versions, hosts, headers, formats — never values) for the sandbox's version.
 * A value that no longer opens (a key removed from the keyring) is left out rather than failing
 * the sandbox's whole policy.
 */
export async function loadInjections(
  deps: CredentialDeps,
  tenantId: string,
): Promise<{ injections: CredentialInjection[]; fingerprint: string }> {
  const rows = await sqlOf(deps.db).rows(selectBoundSecrets, tenantId);
  const injections: CredentialInjection[] = [];
  const hash = createHash('sha256');
  for (const row of rows) {
    let value: string;
    try {
      value = openEnvelope(
        deps.keyring,
        { ciphertext: row.ciphertext, nonce: row.nonce, wrappedKey: row.wrapped_key },
        secretAad(tenantId, row.name),
      );
    } catch {
      continue;
    }
    injections.push({
      hosts: row.inject.hosts,
      header: row.inject.header,
      value: formatInjection(row.inject.format ?? '{value}', value),
    });
    hash.update(JSON.stringify([row.name, row.version, row.inject]));
  }
  return { injections, fingerprint: hash.digest('hex').slice(0, 16) };
}

/**
 * egressCaOf answers the installation's egress CA, generating it on first use: the key is sealed
 * with the keyring (like a secret value) and only its certificate ever leaves the control plane's
 * processes for sandboxes. Two processes generating at once keep whichever row was stored first.
 */
export async function egressCaOf(deps: CredentialDeps): Promise<InjectionCa> {
  const sql = sqlOf(deps.db);
  let row = await sql.row(selectEgressCa, INSTALLATION_CA);
  if (!row) {
    const made = await makeInjectionCa('Cubicle egress CA');
    const sealed = sealEnvelope(deps.keyring, made.keyPem, caAad(INSTALLATION_CA));
    await sql.exec(
      insertEgressCa,
      INSTALLATION_CA,
      made.certPem,
      Buffer.from(sealed.ciphertext),
      Buffer.from(sealed.nonce),
      Buffer.from(sealed.wrappedKey),
      sealed.keyId,
    );
    row = (await sql.row(selectEgressCa, INSTALLATION_CA))!;
  }
  const keyPem = openEnvelope(
    deps.keyring,
    { ciphertext: row.key_ciphertext, nonce: row.key_nonce, wrappedKey: row.wrapped_key },
    caAad(INSTALLATION_CA),
  );
  return { certPem: row.cert_pem, keyPem };
}

/**
 * egressCredentialsOf is what an egress point (the worker's local one, the Kubernetes
 * Deployment) injects with: the installation CA (egressCaOf) and, when `upstreamCaPath` is set,
 * one more PEM it trusts upstream (tests: the fake internet's CA). undefined when injection is
 * `off`. Rejects when the CA is unavailable (openssl missing, a keyring that no longer opens
 * it): the caller then runs its point without injection rather than not at all.
 */
export async function egressCredentialsOf(
  deps: CredentialDeps,
  settings: { inject: 'auto' | 'off'; upstreamCaPath?: string | undefined },
): Promise<EgressCredentials | undefined> {
  if (settings.inject === 'off') return undefined;
  return {
    ca: await egressCaOf(deps),
    ...(settings.upstreamCaPath && { upstreamCa: await readFile(settings.upstreamCaPath, 'utf8') }),
  };
}
