import { SECRET_VALUE_MAX_BYTES } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';

/** The most secrets one claim holds (its own plus stored ones attached). */
export const CLAIM_SECRETS_MAX = 64;

/**
 * checkSecretValue refuses a value over SECRET_VALUE_MAX_BYTES (UTF-8 bytes) with 413
 * `payload_too_large` naming the secret, never echoing the value. Services call it before they
 * change anything.
 */
export function checkSecretValue(name: string, value: string): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > SECRET_VALUE_MAX_BYTES)
    throw new AppError(
      'payload_too_large',
      `secret ${name} is ${bytes} bytes; the limit is ${SECRET_VALUE_MAX_BYTES}`,
      { name, limit: SECRET_VALUE_MAX_BYTES },
    );
}
