import { describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook } from './webhook-signature.js';

describe('signWebhook', () => {
  it('matches the Standard Webhooks example signature', () => {
    // The example of the Standard Webhooks spec (secret, id, timestamp, body → signature).
    const headers = signWebhook(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('signs with every secret during a rotation, space-separated', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    const both = signWebhook([a, b], 'msg_1', 1, '{}')['webhook-signature'].split(' ');
    expect(both).toEqual([
      signWebhook([a], 'msg_1', 1, '{}')['webhook-signature'],
      signWebhook([b], 'msg_1', 1, '{}')['webhook-signature'],
    ]);
    expect(both[0]).not.toBe(both[1]);
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
    expect(() => signWebhook(['not-a-secret'], 'msg_1', 1, '{}')).toThrow(/whsec_/);
  });
});
