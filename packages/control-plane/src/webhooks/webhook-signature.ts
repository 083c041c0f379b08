import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks asks for 24–64 random bytes; 32 is one HMAC-SHA256 block key. */
const SECRET_BYTES = 32;

/** newWebhookSecret makes a signing secret as Standard Webhooks prints it: `whsec_` + base64. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** secretBytes decodes a `whsec_…` secret to the key bytes the HMAC uses. */
function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * signWebhook builds the Standard Webhooks headers for one attempt: the signature of each
 * secret is `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` keyed by the secret's
 * decoded bytes; several (during a rotation) are space-separated, and a receiver accepts any.
 */
export function signWebhook(
  secrets: string[],
  id: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  const signed = `${id}.${timestampSeconds}.${body}`;
  const signatures = secrets.map(
    (secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(signed).digest('base64')}`,
  );
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatures.join(' '),
  };
}
