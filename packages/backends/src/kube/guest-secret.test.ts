import { describe, expect, it } from 'vitest';
import { buildGuestSecret, newGuestToken, tokenOfSecret } from './guest-secret.js';

const identity = {
  sandboxId: 'sbx_01jx0000000000000000000000',
  tenantId: 'ten_a',
  poolId: 'pool_b',
};

describe('buildGuestSecret', () => {
  it('holds the token under data key `token`, named <object>-guest, labelled like the sandbox', () => {
    const token = newGuestToken();
    const secret = buildGuestSecret(identity, 'ns', token, { userdata: '#cloud-config\n' });
    expect(secret.metadata?.name).toBe('sbx-01jx0000000000000000000000-guest');
    expect(secret.type).toBe('Opaque');
    expect(secret.stringData).toEqual({ token, userdata: '#cloud-config\n' });
    expect(secret.metadata?.labels?.['cubicle.dev/sandbox']).toBe(identity.sandboxId);
    expect(JSON.stringify(secret.metadata)).not.toContain(token);
  });

  it('extra keys cannot replace the token', () => {
    const secret = buildGuestSecret(identity, 'ns', 'a'.repeat(64), { token: 'evil' });
    expect(secret.stringData?.token).toBe('a'.repeat(64));
  });
});

describe('tokenOfSecret', () => {
  it('decodes the token the API server returns base64-encoded', () => {
    const token = newGuestToken();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenOfSecret({ data: { token: Buffer.from(token).toString('base64') } })).toBe(token);
  });
  it('is null for a missing or too short token', () => {
    expect(tokenOfSecret({ data: {} })).toBeNull();
    expect(tokenOfSecret({ data: { token: Buffer.from('short').toString('base64') } })).toBeNull();
  });
});
