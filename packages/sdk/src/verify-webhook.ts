import type { WebhookPayload } from './generated/api-types.js';

/**
 * WebhookVerificationError: a delivery that must not be trusted (a missing header, a timestamp
 * outside the tolerance, no matching signature, a body that is not the event JSON). `reason`
 * says which, for the receiver's logs; answer such a request with 400 and do not act on it.
 */
export class WebhookVerificationError extends Error {
  readonly reason:
    'missing_header' | 'bad_timestamp' | 'bad_signature' | 'bad_secret' | 'bad_payload';
  constructor(reason: WebhookVerificationError['reason'], message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, as Standard Webhooks). */
  toleranceSeconds?: number;
  /** The clock, in ms since the epoch (tests). */
  now?: number;
}

/** The request headers: a fetch `Headers`, or Node's `req.headers` (lower-case names). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const PREFIX = 'whsec_';

/**
 * verifyWebhook checks one delivery as the Standard Webhooks scheme signs it and returns the
 * event. `payload` is the raw request body exactly as received (a string or its bytes: parse
 * after, not before, verifying); `secret` is the endpoint's `whsec_…` secret. The signature is
 * `v1,` + base64 HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${payload}`; during a secret
 * rotation the header carries several and any one matching is enough. The comparison is
 * WebCrypto's HMAC verify (constant time), so it runs in Node, Deno, Bun, edge runtimes and
 * browsers alike. Throws WebhookVerificationError.
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookPayload> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'missing_header',
      'webhook-id, webhook-timestamp and webhook-signature are all required',
    );
  }
  const seconds = /^\d{1,15}$/.test(timestamp) ? Number(timestamp) : NaN;
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (!Number.isFinite(seconds) || Math.abs(nowSeconds - seconds) > tolerance) {
    throw new WebhookVerificationError(
      'bad_timestamp',
      `webhook-timestamp is more than ${tolerance} s from now (a replay or a wrong clock)`,
    );
  }
  const key = await importKey(secret);
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  const signed = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const mac = decodeBase64(value);
    if (mac && (await crypto.subtle.verify('HMAC', key, mac, signed))) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookPayload;
      } catch {
        throw new WebhookVerificationError('bad_payload', 'the signed body is not JSON');
      }
    }
  }
  throw new WebhookVerificationError('bad_signature', 'no webhook-signature matches the secret');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function')
    return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value =
    record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : value;
}

async function importKey(secret: string) {
  const bytes = secret.startsWith(PREFIX) ? decodeBase64(secret.slice(PREFIX.length)) : null;
  if (!bytes || bytes.length === 0) {
    throw new WebhookVerificationError('bad_secret', 'a webhook secret is whsec_ + base64');
  }
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
