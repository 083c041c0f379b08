import { z } from 'zod';

/** IdempotencyHeaders: retried POSTs with the same key and body return the first response. */
export const IdempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional(),
});

export const authErrors = ['unauthenticated', 'rate_limited'] as const;
export const readErrors = [...authErrors, 'validation_failed', 'invalid_id', 'not_found'] as const;
export const writeErrors = [
  ...readErrors,
  'invalid_json',
  'payload_too_large',
  'forbidden',
] as const;

export const claimChild = (child: string) => `/v1/claims/{id}/${child}`;
