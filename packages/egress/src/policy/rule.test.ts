import { EGRESS_RULE_PATTERN, EgressRule } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { formatAddress, parseAddress, parseCidr } from './address.js';
import { parseRule, ruleWithin } from './rule.js';

const rule = (text: string) => {
  const parsed = parseRule(text);
  if (!parsed) throw new Error(`test rule ${text} does not parse`);
  return parsed;
};

describe('parseRule', () => {
  it('reads names, wildcards, CIDRs of both families and ports', () => {
    expect(rule('API.Example.com').target).toEqual({ kind: 'domain', name: 'api.example.com' });
    expect(rule('*.example.com:443')).toMatchObject({
      target: { kind: 'wildcard', suffix: 'example.com' },
      ports: { from: 443, to: 443 },
    });
    const v4 = rule('203.0.113.7/24:8000-8999');
    expect(v4.target.kind === 'cidr' && formatAddress(v4.target.cidr.bytes)).toBe('203.0.113.0');
    expect(v4.ports).toEqual({ from: 8000, to: 8999 });
    expect(rule('x.example.com:9000-8000').ports).toEqual({ from: 8000, to: 9000 });
    const v6 = rule('[2001:db8::/32]:53');
    expect(v6.target.kind === 'cidr' && v6.target.cidr.bits).toBe(32);
    expect(rule('2001:db8::1').target).toMatchObject({ kind: 'cidr', cidr: { bits: 128 } });
    expect(rule('198.51.100.9').target).toMatchObject({ kind: 'cidr', cidr: { bits: 32 } });
  });

  it('refuses what is not a rule', () => {
    for (const bad of [
      '*',
      '*.com.',
      'example.com:0',
      'example.com:70000',
      '10.0.0.0/33',
      '2001:db8::/129',
      '2001:db8::1:443:x',
      '[example.com]:443',
      'a..b',
      'http://example.com',
      '1.2.3.999',
      '',
    ]) {
      expect(parseRule(bad), bad).toBeNull();
    }
  });

  it('accepts exactly what the contract pattern accepts', () => {
    const samples = [
      'example.com',
      'localhost',
      '*.example.com',
      '*.co',
      'x.example.com:1',
      'x.example.com:65535',
      'x.example.com:65536',
      'x.example.com:1-65535',
      'x.example.com:0',
      '10.0.0.0/8',
      '10.0.0.0/8:22',
      '0.0.0.0/0',
      '1.2.3.4',
      '1.2.3.999',
      '::/0',
      '::1',
      '[::1]:80',
      '[2001:db8::/48]:1-2',
      '2001:db8::/48:443',
      '::ffff:10.0.0.1',
      '*.10.0.0.1',
      '*.*.example.com',
      '-bad.example.com',
      'bad-.example.com',
      'a'.repeat(64) + '.com',
      '_dmarc.example.com',
      'Example.COM',
      '999.1.1.1',
    ];
    const pattern = new RegExp(EGRESS_RULE_PATTERN);
    for (const sample of samples) {
      const viaContract = pattern.test(sample) && EgressRule.safeParse(sample).success;
      expect(parseRule(sample) !== null, sample).toBe(viaContract);
    }
  });
});

describe('ruleWithin', () => {
  const within = (inner: string, outer: string) => ruleWithin(rule(inner), rule(outer));

  it('puts names under equal names and wildcards above them', () => {
    expect(within('api.example.com', 'api.example.com')).toBe(true);
    expect(within('api.example.com', '*.example.com')).toBe(true);
    expect(within('a.b.example.com', '*.example.com')).toBe(true);
    expect(within('example.com', '*.example.com')).toBe(false);
    expect(within('*.example.com', 'example.com')).toBe(false);
    expect(within('*.b.example.com', '*.example.com')).toBe(true);
    expect(within('*.example.com', '*.b.example.com')).toBe(false);
    expect(within('api.example.org', '*.example.com')).toBe(false);
    // A suffix match must be at a label boundary.
    expect(within('badexample.com', '*.example.com')).toBe(false);
  });

  it('puts CIDRs inside CIDRs of the same family', () => {
    expect(within('10.1.0.0/16', '10.0.0.0/8')).toBe(true);
    expect(within('10.0.0.0/8', '10.1.0.0/16')).toBe(false);
    expect(within('11.0.0.0/16', '10.0.0.0/8')).toBe(false);
    expect(within('2001:db8:1::/48', '2001:db8::/32')).toBe(true);
    expect(within('2001:db9::/48', '2001:db8::/32')).toBe(false);
    expect(within('::ffff:10.1.2.3', '10.0.0.0/8')).toBe(true);
    expect(within('10.0.0.1', '::/0')).toBe(false);
  });

  it('never mixes names and CIDRs', () => {
    expect(within('api.example.com', '0.0.0.0/0')).toBe(false);
    expect(within('203.0.113.1', '*.example.com')).toBe(false);
  });

  it('keeps ports inside ports; no ports means every port', () => {
    expect(within('x.example.com:443', 'x.example.com')).toBe(true);
    expect(within('x.example.com', 'x.example.com:443')).toBe(false);
    expect(within('x.example.com:8100-8200', 'x.example.com:8000-8999')).toBe(true);
    expect(within('x.example.com:7999-8200', 'x.example.com:8000-8999')).toBe(false);
  });
});

describe('addresses', () => {
  it('reads mapped IPv6 as IPv4 and clears host bits', () => {
    expect(formatAddress(parseAddress('::ffff:169.254.169.254')!)).toBe('169.254.169.254');
    expect(formatAddress(parseCidr('10.1.2.3/8')!.bytes)).toBe('10.0.0.0');
    expect(formatAddress(parseAddress('2001:DB8:0:0:0:0:0:1')!)).toBe('2001:db8::1');
    expect(parseAddress('fe80::1%eth0')).not.toBeNull();
    expect(parseAddress('example.com')).toBeNull();
    expect(parseCidr('10.0.0.0/8/1')).toBeNull();
  });
});
