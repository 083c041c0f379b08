import type { EffectiveEgressPolicy, EgressPolicyInput } from '@cubicle/contract/api';
import { EgressPolicy } from '@cubicle/contract/api';
import { describe, expect, it } from 'vitest';
import { decideConnection, decideName, filterAnswers, withHostAddresses } from './decide.js';
import { effectivePolicy, type OperatorRanges } from './effective-policy.js';

const NO_OPERATOR: OperatorRanges = { allow: [] };

const poolPolicy = (p: EgressPolicyInput, operator = NO_OPERATOR): EffectiveEgressPolicy =>
  effectivePolicy('none', operator, EgressPolicy.parse(p), null);

const tcp = (ip: string, port: number, name?: string) => ({
  ip,
  port,
  name,
  protocol: 'tcp' as const,
});

describe('modes', () => {
  it('none reaches nothing, by name or address', () => {
    const policy = effectivePolicy('none', NO_OPERATOR, null, null);
    expect(decideName(policy, 'example.com')).toEqual({ allowed: false, rule: 'default:none' });
    expect(decideConnection(policy, tcp('203.0.113.10', 443))).toEqual({
      allowed: false,
      rule: 'default:none',
    });
  });

  it('open reaches public addresses and still applies deny rules', () => {
    const policy = poolPolicy({ mode: 'open', deny: ['*.ads.example', '198.51.100.0/24:25'] });
    expect(decideName(policy, 'www.example.com')).toEqual({ allowed: true, rule: 'default:open' });
    expect(decideName(policy, 'x.ADS.example.')).toEqual({
      allowed: false,
      rule: 'pool.deny[0]: *.ads.example',
    });
    expect(decideConnection(policy, tcp('198.51.100.5', 25)).rule).toBe(
      'pool.deny[1]: 198.51.100.0/24:25',
    );
    expect(decideConnection(policy, tcp('198.51.100.5', 443))).toEqual({
      allowed: true,
      rule: 'default:open',
    });
  });

  it('the installation default applies to a pool without a policy', () => {
    const policy = effectivePolicy('open', NO_OPERATOR, null, null);
    expect(policy.mode_source).toBe('installation');
    expect(decideConnection(policy, tcp('203.0.113.1', 80)).allowed).toBe(true);
  });
});

describe('allowlist', () => {
  const policy = poolPolicy({
    mode: 'allowlist',
    allow: [
      'api.example.test:443',
      '*.cdn.example.test',
      '203.0.113.0/24:8000-8999',
      '[2001:db8::/32]:443',
    ],
    deny: ['bad.cdn.example.test'],
  });

  it('allows exact names on their ports only', () => {
    expect(decideName(policy, 'api.example.test')).toEqual({
      allowed: true,
      rule: 'pool.allow[0]: api.example.test:443',
    });
    expect(decideConnection(policy, tcp('198.51.100.7', 443, 'api.example.test')).allowed).toBe(
      true,
    );
    expect(decideConnection(policy, tcp('198.51.100.7', 80, 'api.example.test'))).toEqual({
      allowed: false,
      rule: 'default:allowlist',
    });
  });

  it('wildcards cover names below, not the name itself, and deny wins', () => {
    expect(decideConnection(policy, tcp('198.51.100.8', 80, 'img.cdn.example.test')).rule).toBe(
      'pool.allow[1]: *.cdn.example.test',
    );
    expect(decideConnection(policy, tcp('198.51.100.8', 80, 'cdn.example.test')).allowed).toBe(
      false,
    );
    expect(decideName(policy, 'bad.cdn.example.test').rule).toBe(
      'pool.deny[0]: bad.cdn.example.test',
    );
    expect(decideConnection(policy, tcp('198.51.100.8', 80, 'bad.cdn.example.test')).allowed).toBe(
      false,
    );
  });

  it('allows CIDRs of both families by port range', () => {
    expect(decideConnection(policy, tcp('203.0.113.9', 8000)).allowed).toBe(true);
    expect(decideConnection(policy, tcp('203.0.113.9', 8999)).allowed).toBe(true);
    expect(decideConnection(policy, tcp('203.0.113.9', 9000)).allowed).toBe(false);
    expect(decideConnection(policy, tcp('203.0.114.9', 8000)).allowed).toBe(false);
    expect(decideConnection(policy, tcp('2001:db8:5::1', 443)).rule).toBe(
      'pool.allow[3]: [2001:db8::/32]:443',
    );
    expect(decideConnection(policy, tcp('2001:db9::1', 443)).allowed).toBe(false);
  });

  it('resolves other names only for their answers when CIDR rules exist', () => {
    expect(decideName(policy, 'other.example.test')).toEqual({
      allowed: true,
      rule: 'default:allowlist-by-address',
    });
    const answers = filterAnswers(policy, 'other.example.test', ['203.0.113.50', '198.51.100.1']);
    expect(answers.kept).toEqual(['203.0.113.50']);
    expect(answers.refused).toEqual([
      { ip: '198.51.100.1', decision: { allowed: false, rule: 'default:allowlist' } },
    ]);
    const namesOnly = poolPolicy({ mode: 'allowlist', allow: ['api.example.test'] });
    expect(decideName(namesOnly, 'other.example.test')).toEqual({
      allowed: false,
      rule: 'default:allowlist',
    });
  });
});

describe('the operator floor', () => {
  const open = poolPolicy({ mode: 'open', allow: [] });
  const cases: [string, string][] = [
    ['127.0.0.1', 'operator:loopback'],
    ['::1', 'operator:loopback'],
    ['0.0.0.0', 'operator:unspecified'],
    ['10.1.2.3', 'operator:private-ranges'],
    ['172.20.0.1', 'operator:private-ranges'],
    ['192.168.1.1', 'operator:private-ranges'],
    ['100.64.0.1', 'operator:private-ranges'],
    ['fd12:3456::1', 'operator:private-ranges'],
    ['169.254.169.254', 'operator:metadata'],
    ['fd00:ec2::254', 'operator:metadata'],
    ['169.254.1.1', 'operator:link-local'],
    ['fe80::1', 'operator:link-local'],
    ['224.0.0.251', 'operator:multicast'],
    ['255.255.255.255', 'operator:reserved'],
    ['::ffff:127.0.0.1', 'operator:loopback'],
    ['::ffff:169.254.169.254', 'operator:metadata'],
    ['64:ff9b::a00:1', 'operator:private-ranges'],
    ['64:ff9b::cb00:7101', 'operator:ipv4-embedded'],
    ['2002:0a00:0001::1', 'operator:private-ranges'],
    ['2001:0:4136:e378::1', 'operator:ipv4-embedded'],
  ];

  it('closes host loopback, private, link-local, metadata and embedded ranges in every mode', () => {
    for (const [ip, rule] of cases) {
      expect(decideConnection(open, tcp(ip, 443)), ip).toEqual({ allowed: false, rule });
    }
    // Even a tenant allow rule naming the range does not open it.
    const tenantTries = poolPolicy({ mode: 'allowlist', allow: ['10.0.0.0/8', '169.254.169.254'] });
    expect(decideConnection(tenantTries, tcp('10.0.0.5', 80)).rule).toBe('operator:private-ranges');
    expect(decideConnection(tenantTries, tcp('169.254.169.254', 80)).rule).toBe(
      'operator:metadata',
    );
  });

  it('leaves documentation ranges and public addresses to the policy', () => {
    for (const ip of ['198.51.100.1', '203.0.113.1', '192.0.2.1', '8.8.8.8', '2001:db8::1']) {
      expect(decideConnection(open, tcp(ip, 443)), ip).toEqual({
        allowed: true,
        rule: 'default:open',
      });
    }
  });

  it('opens only what the operator opens, never loopback', () => {
    const operator = { allow: ['10.20.0.0/16', '127.0.0.0/8', 'fd00::/8'] };
    const policy = poolPolicy({ mode: 'open' }, operator);
    expect(decideConnection(policy, tcp('10.20.0.5', 443)).allowed).toBe(true);
    expect(decideConnection(policy, tcp('10.21.0.5', 443)).rule).toBe('operator:private-ranges');
    expect(decideConnection(policy, tcp('127.0.0.1', 443)).rule).toBe('operator:loopback');
    expect(decideConnection(policy, tcp('fd00:ec2::254', 80)).allowed).toBe(true);
    // The operator lifts the floor only; the tenant's mode still decides.
    const none = effectivePolicy('none', operator, null, null);
    expect(decideConnection(none, tcp('10.20.0.5', 443)).rule).toBe('default:none');
  });

  it('closes the control plane and node addresses, also when learned at run time', () => {
    const policy = poolPolicy({ mode: 'open' }, { allow: [], hostAddresses: ['198.51.100.200'] });
    expect(decideConnection(policy, tcp('198.51.100.200', 443)).rule).toBe(
      'operator:host-addresses',
    );
    const learned = withHostAddresses(policy, ['203.0.113.250']);
    expect(decideConnection(learned, tcp('203.0.113.250', 22)).rule).toBe(
      'operator:host-addresses',
    );
    expect(decideConnection(policy, tcp('203.0.113.250', 22)).allowed).toBe(true);
  });
});

describe('DNS rebinding', () => {
  const policy = poolPolicy({ mode: 'allowlist', allow: ['*.example.test'] });

  it('drops answers in closed ranges and refuses the connection', () => {
    expect(decideName(policy, 'rebind.example.test').allowed).toBe(true);
    const answers = filterAnswers(policy, 'rebind.example.test', [
      '203.0.113.5',
      '10.0.0.7',
      '::ffff:127.0.0.1',
    ]);
    expect(answers.kept).toEqual(['203.0.113.5']);
    expect(answers.refused.map((r) => r.decision.rule)).toEqual([
      'operator:private-ranges',
      'operator:loopback',
    ]);
    expect(decideConnection(policy, tcp('10.0.0.7', 443, 'rebind.example.test'))).toEqual({
      allowed: false,
      rule: 'operator:private-ranges',
    });
  });

  it('a port-less deny block drops answers; a port-bound one leaves them for other ports', () => {
    const p = poolPolicy({ mode: 'open', deny: ['203.0.113.0/24', '198.51.100.0/24:25'] });
    expect(filterAnswers(p, 'x.test', ['203.0.113.1', '198.51.100.1']).kept).toEqual([
      '198.51.100.1',
    ]);
  });
});
