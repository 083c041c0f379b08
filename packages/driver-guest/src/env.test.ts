import { parseEnv } from '@cubicle/config';
import { describe, expect, it } from 'vitest';
import { GuestEnv } from './env.js';

describe('guest env', () => {
  it('defaults to port 3211 on localhost and requires a long token', () => {
    const env = parseEnv(GuestEnv, { GUEST_TOKEN: 'x'.repeat(32), DISPLAY: ':7' });
    expect(env).toMatchObject({ GUEST_PORT: 3211, GUEST_HOST: '127.0.0.1', DISPLAY: ':7' });
    expect(() => parseEnv(GuestEnv, { GUEST_TOKEN: 'short' })).toThrow(/GUEST_TOKEN/);
    expect(() =>
      parseEnv(GuestEnv, { GUEST_TOKEN: 'x'.repeat(32), DISPLAY: 'localhost:0' }),
    ).toThrow(/DISPLAY/);
  });
});
