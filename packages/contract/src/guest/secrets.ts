import { z } from 'zod';
import { named } from '../registry.js';

/** GuestSecretName: a secret's file name, an upper-case environment variable name. */
export const GuestSecretName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an upper-case environment variable name');

/** The most secrets one write carries, and the largest value (bytes, as the API enforces). */
export const GUEST_SECRETS_MAX = 256;
export const GUEST_SECRET_VALUE_MAX_BYTES = 65_536;

/**
 * SecretsWriteRequest writes one file per secret into the guest's secrets directory (a tmpfs,
 * mode 0700, of the sandbox user), each atomically and mode 0600. With `exclusive`, files of
 * secrets not listed are removed, so the directory holds exactly the claim's secrets.
 */
export const SecretsWriteRequest = named(
  'GuestSecretsWriteRequest',
  z.strictObject({
    secrets: z
      .array(
        z.strictObject({
          name: GuestSecretName,
          value: z.string().max(GUEST_SECRET_VALUE_MAX_BYTES),
        }),
      )
      .max(GUEST_SECRETS_MAX),
    exclusive: z.boolean().default(false),
  }),
);
export type SecretsWriteRequest = z.infer<typeof SecretsWriteRequest>;

/** SecretsResponse: the directory and the secret files in it after the call (names, never values). */
export const SecretsResponse = named(
  'GuestSecretsResponse',
  z.strictObject({
    dir: z.string(),
    names: z.array(GuestSecretName),
  }),
);
export type SecretsResponse = z.infer<typeof SecretsResponse>;

/** SecretsDeleteRequest removes the files of the named secrets (absent ones are fine). */
export const SecretsDeleteRequest = named(
  'GuestSecretsDeleteRequest',
  z.strictObject({ names: z.array(GuestSecretName).max(GUEST_SECRETS_MAX) }),
);
export type SecretsDeleteRequest = z.infer<typeof SecretsDeleteRequest>;
