import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from './verify-webhook.js';

// Signed here with node:crypto, independently of the WebCrypto code under test; real
// deliveries are verified in test/e2e/webhooks.test.ts.
const key = Buffer.from('a fixed 32-byte key for the tests');
const secret = `whsec_${key.toString('base64')}`;
const body = JSON.stringify({ type: 'claim.ended', timestamp: '2026-01-01T00:00:00Z', data: {} });
const at = 1_800_000_000;
const sign = (k: Buffer, id: string, ts: number, payload: string) =>
  `v1,${createHmac('sha256', k).update(`${id}.${ts}.${payload}`).digest('base64')}`;
const headers = (signature: string, ts = at) => ({
  'webhook-id': 'msg_1',
  'webhook-timestamp': String(ts),
  'webhook-signature': signature,
});
const now = at * 1000;

async function reasonOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).reason;
}

describe('verifyWebhook', () => {
  it('returns the event of a correctly signed delivery (string, bytes, Headers, Node headers)', async () => {
    const h = headers(sign(key, 'msg_1', at, body));
    expect(await verifyWebhook(body, h, secret, { now })).toEqual(JSON.parse(body));
    expect(
      await verifyWebhook(new TextEncoder().encode(body), new Headers(h), secret, { now }),
    ).toEqual(JSON.parse(body));
  });

  it('accepts any one of several signatures (a rotation) and skips unknown versions', async () => {
    const other = Buffer.from('the previous secret of the endpoint');
    const h = headers(`v2,abc ${sign(other, 'msg_1', at, body)} ${sign(key, 'msg_1', at, body)}`);
    expect(await verifyWebhook(body, h, secret, { now })).toMatchObject({ type: 'claim.ended' });
  });

  it('refuses a changed body, another id, a wrong secret and an unsigned request', async () => {
    const good = sign(key, 'msg_1', at, body);
    expect(await reasonOf(verifyWebhook(`${body} `, headers(good), secret, { now }))).toBe(
      'bad_signature',
    );
    const wrongId = { ...headers(good), 'webhook-id': 'msg_2' };
    expect(await reasonOf(verifyWebhook(body, wrongId, secret, { now }))).toBe('bad_signature');
    const otherSecret = `whsec_${Buffer.from('another key').toString('base64')}`;
    expect(await reasonOf(verifyWebhook(body, headers(good), otherSecret, { now }))).toBe(
      'bad_signature',
    );
    expect(await reasonOf(verifyWebhook(body, { 'webhook-id': 'msg_1' }, secret, { now }))).toBe(
      'missing_header',
    );
    expect(await reasonOf(verifyWebhook(body, headers(good), 'not-a-secret', { now }))).toBe(
      'bad_secret',
    );
  });

  it('refuses a timestamp outside the tolerance, even correctly signed (a replay)', async () => {
    const old = at - 301;
    const h = headers(sign(key, 'msg_1', old, body), old);
    expect(await reasonOf(verifyWebhook(body, h, secret, { now }))).toBe('bad_timestamp');
    expect(await verifyWebhook(body, h, secret, { now, toleranceSeconds: 600 })).toBeTruthy();
    const junk = headers(sign(key, 'msg_1', at, body), at);
    junk['webhook-timestamp'] = '17e8';
    expect(await reasonOf(verifyWebhook(body, junk, secret, { now }))).toBe('bad_timestamp');
  });
});
