import { z } from 'zod';
import { named } from '../registry.js';
import { text } from '../text.js';
import { ClaimId, SecretId, Timestamp } from './common.js';

export const SecretName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an upper-case environment variable name');

/** The largest secret value, in UTF-8 bytes; a larger one is 413 `payload_too_large`. */
export const SECRET_VALUE_MAX_BYTES = 65_536;

/**
 * SecretValue is a secret's plaintext. Its size is checked in bytes by the service (413
 * `payload_too_large` above SECRET_VALUE_MAX_BYTES), not here, so that an oversized value is
 * refused with that code rather than as a validation failure. The text rule holds too: a value
 * becomes an environment variable (no NUL), and a lone surrogate has no UTF-8 form the guest
 * could write or the redactor could look for (the fuzz's `"\udfff"` was a 500).
 */
export const SecretValue = text()
  .min(1)
  .describe(`The value (at most ${SECRET_VALUE_MAX_BYTES} bytes UTF-8); never returned.`);

/** CreateSecretRequest is the only place a secret value travels toward Cubicle; it is never returned. */
export const CreateSecretRequest = named(
  'CreateSecretRequest',
  z.strictObject({ name: SecretName, value: SecretValue }),
);
export type CreateSecretRequest = z.infer<typeof CreateSecretRequest>;

/** ClaimSecrets: `{NAME: value}` given with a claim request, delivered to the claimed desktop. */
export const ClaimSecrets = z.record(SecretName, SecretValue);
export type ClaimSecrets = z.infer<typeof ClaimSecrets>;

/** SecretRef names a per-claim secret without its value. */
export const SecretRef = named(
  'SecretRef',
  z.strictObject({
    id: SecretId,
    claim_id: ClaimId,
    name: SecretName,
    created_at: Timestamp,
  }),
);
export type SecretRef = z.infer<typeof SecretRef>;

export const SecretNamePathParams = z.strictObject({ name: SecretName });

/**
 * StoredSecretUsableBy says which keys of the tenant may name a stored secret in a claim
 * (`stored_secrets`) or a run (`secrets`): `admins` (the default) or `members` (admin and member
 * keys). Naming one the key may not use is 403 `secret_not_usable`. A write that omits it keeps
 * the previous version's setting (`admins` for the first version).
 */
export const StoredSecretUsableBy = named('StoredSecretUsableBy', z.enum(['admins', 'members']));
export type StoredSecretUsableBy = z.infer<typeof StoredSecretUsableBy>;

/** An exact host name (lower case, no wildcard, no port) a credential may be bound to. */
const InjectHost = z
  .string()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/,
    'an exact lower-case host name (no wildcard, no port)',
  );

/**
 * SecretInjection binds a stored secret to destinations: HTTPS requests from a claimed desktop of
 * the tenant to one of `hosts` (exact names, port 443 or any port the pool's egress allows) get
 * `header: format` added at the egress point, with `{value}` replaced by the secret's newest
 * version. The desktop never holds the value: the egress point terminates TLS for these hosts
 * only, with a certificate from the installation's egress CA, which the desktop trusts. Plain HTTP
 * to a bound host is passed on without the header (a credential never travels unencrypted).
 */
export const SecretInjection = named(
  'SecretInjection',
  z.strictObject({
    hosts: z.array(InjectHost).min(1).max(32),
    /** An HTTP header name (a token; `Host` and hop-by-hop headers are refused). */
    header: z
      .string()
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'an HTTP header name')
      .refine(
        (h) =>
          ![
            'host',
            'connection',
            'keep-alive',
            'proxy-connection',
            'transfer-encoding',
            'upgrade',
            'te',
            'trailer',
            'content-length',
          ].includes(h.toLowerCase()),
        'a header the egress point may set (not Host, Content-Length or a hop-by-hop header)',
      ),
    /** The header's value with `{value}` where the secret goes, e.g. `Bearer {value}`. */
    format: z
      .string()
      .max(256)
      .refine((f) => f.includes('{value}'), 'must contain {value}')
      .refine((f) => !/[\r\n\0]/.test(f), 'no line breaks')
      .default('{value}'),
  }),
);
export type SecretInjection = z.infer<typeof SecretInjection>;

/** CreateStoredSecretRequest writes a new version of a tenant's stored secret by name. */
export const CreateStoredSecretRequest = named(
  'CreateStoredSecretRequest',
  z.strictObject({
    name: SecretName,
    value: SecretValue,
    usable_by: StoredSecretUsableBy.optional(),
    /** Bind the secret to hosts (SecretInjection); null unbinds; omitted keeps the previous version's. */
    inject: SecretInjection.nullable().optional(),
  }),
);
export type CreateStoredSecretRequest = z.infer<typeof CreateStoredSecretRequest>;

/** PutStoredSecretRequest writes a new version of a tenant's stored secret. */
export const PutStoredSecretRequest = named(
  'PutStoredSecretRequest',
  z.strictObject({
    value: SecretValue,
    usable_by: StoredSecretUsableBy.optional(),
    /** Bind the secret to hosts (SecretInjection); null unbinds; omitted keeps the previous version's. */
    inject: SecretInjection.nullable().optional(),
  }),
);
export type PutStoredSecretRequest = z.infer<typeof PutStoredSecretRequest>;

/**
 * StoredSecret is a tenant-level secret without its value: a claim (`stored_secrets`) or a run
 * (`secrets`) references it by name and receives its newest version.
 */
export const StoredSecret = named(
  'StoredSecret',
  z.strictObject({
    name: SecretName,
    /** The newest version (1 for the first write; every write adds one). */
    version: z.number().int().min(1),
    /** When the first version was written. */
    created_at: Timestamp,
    /** When the newest version was written. */
    updated_at: Timestamp,
    /** Which keys may name it in a claim or a run (the newest version's setting). */
    usable_by: StoredSecretUsableBy,
    /** The hosts it is injected into at egress (the newest version's binding), or null. */
    inject: SecretInjection.nullable(),
  }),
);
export type StoredSecret = z.infer<typeof StoredSecret>;
