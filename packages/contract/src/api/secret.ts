import { z } from 'zod';
import { named } from '../registry.js';
import { ClaimId, SecretId, Timestamp } from './common.js';

export const SecretName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an upper-case environment variable name');

/** CreateSecretRequest is the only place a secret value travels toward Cubicle; it is never returned. */
export const CreateSecretRequest = named(
  'CreateSecretRequest',
  z.strictObject({ name: SecretName, value: z.string().min(1).max(65_536) }),
);
export type CreateSecretRequest = z.infer<typeof CreateSecretRequest>;

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
