import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact-url.js';

describe('redactUrl', () => {
  it('hides tickets and other credentials in query strings, keeps the rest', () => {
    expect(redactUrl('/v1/viewer/stream?ticket=eyJhbGciOi.x.y')).toBe(
      '/v1/viewer/stream?ticket=[redacted]',
    );
    expect(redactUrl('/x?a=1&TICKET=abc&b=2')).toBe('/x?a=1&TICKET=[redacted]&b=2');
    expect(redactUrl('/v1/claims?limit=5')).toBe('/v1/claims?limit=5');
    expect(redactUrl('/v1/claims/clm_x/viewer-tickets')).toBe('/v1/claims/clm_x/viewer-tickets');
  });
});
