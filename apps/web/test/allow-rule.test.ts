import { describe, expect, it } from 'vitest';
import { allowRuleFor, canAllowForPool } from '../app/(dashboard)/claims/[id]/allow-rule';

describe('allowRuleFor', () => {
  it('names the destination as narrowly as it is known', () => {
    expect(allowRuleFor({ name: 'API.Example.test.', ip: '203.0.113.5', port: 443 })).toBe(
      'api.example.test:443',
    );
    expect(allowRuleFor({ name: 'example.test', ip: null, port: null })).toBe('example.test');
    expect(allowRuleFor({ name: null, ip: '203.0.113.5', port: 8080 })).toBe('203.0.113.5:8080');
    expect(allowRuleFor({ name: null, ip: '2001:db8::1', port: 443 })).toBe('[2001:db8::1]:443');
    expect(allowRuleFor({ name: null, ip: '2001:db8::1', port: null })).toBe('2001:db8::1');
    expect(allowRuleFor({ name: 'not a name', ip: null, port: 1 })).toBeNull();
  });

  it('offers the pool step only where an allow rule would help', () => {
    expect(canAllowForPool('default:none', false)).toBe(true);
    expect(canAllowForPool('default:allowlist', false)).toBe(true);
    expect(canAllowForPool('default:allowlist', true)).toBe(false);
    expect(canAllowForPool('pool.deny[0]: ads.example.test', false)).toBe(false);
    expect(canAllowForPool('operator:private-ranges', false)).toBe(false);
  });
});
