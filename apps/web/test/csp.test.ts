import { describe, expect, it } from 'vitest';
import { embedCsp, frameAncestors } from '../lib/csp';

describe('embed CSP frame-ancestors', () => {
  it("is 'self' alone when the tenant allows no origin", () => {
    expect(embedCsp([])).toBe("frame-ancestors 'self'");
  });

  it('lists the tenant origins after self, without duplicates', () => {
    expect(
      frameAncestors([
        'https://app.example.com',
        'https://*.example.org:8443',
        'https://app.example.com',
      ]),
    ).toBe("'self' https://app.example.com https://*.example.org:8443");
    expect(frameAncestors(['http://localhost:3000'])).toBe("'self' http://localhost:3000");
  });

  it('drops anything that is not an origin instead of injecting it', () => {
    expect(
      frameAncestors([
        "https://a.example.com; script-src 'unsafe-inline'",
        "'unsafe-inline'",
        '*',
        'https://example.com/path',
        'http://example.com',
        'javascript:alert(1)',
        'HTTPS://UPPER.example.com',
      ]),
    ).toBe("'self'");
  });
});
