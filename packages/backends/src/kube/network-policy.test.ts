import { describe, expect, it } from 'vitest';
import { buildSandboxNetworkPolicy, DENIED_EGRESS_V6 } from './network-policy.js';
import { networkPolicyOptionsOf, parseCidrList } from './network-policy-settings.js';
import { parsePodSelector, selectorMatches } from './pod-selector.js';

describe('buildSandboxNetworkPolicy', () => {
  const cp = { matchLabels: { 'app.kubernetes.io/name': 'cubicle' } };

  it('admits only control-plane pods, only on the guest and VNC ports', () => {
    const policy = buildSandboxNetworkPolicy({ namespace: 'sbx', controlPlanePods: cp });
    expect(policy.metadata?.namespace).toBe('sbx');
    expect(policy.spec?.podSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/managed-by': 'cubicle' },
    });
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress).toEqual([
      {
        from: [{ podSelector: cp }],
        ports: [
          { protocol: 'TCP', port: 8080 },
          { protocol: 'TCP', port: 5900 },
        ],
      },
    ]);
  });

  it('refuses a control-plane selector that sandboxes would match (it would open sandbox-to-sandbox)', () => {
    expect(() =>
      buildSandboxNetworkPolicy({
        namespace: 'sbx',
        controlPlanePods: { matchLabels: { 'app.kubernetes.io/managed-by': 'cubicle' } },
      }),
    ).toThrow('also select sandboxes');
    expect(() =>
      buildSandboxNetworkPolicy({ namespace: 'sbx', controlPlanePods: { matchLabels: {} } }),
    ).toThrow('also select sandboxes');
  });

  it('selects the control plane namespace when it is elsewhere (one peer: both must match)', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      controlPlanePods: cp,
      controlPlaneNamespace: 'cubicle-system',
    });
    expect(policy.spec?.ingress?.[0]?.from).toEqual([
      {
        podSelector: cp,
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'cubicle-system' } },
      },
    ]);
  });

  it('denies egress to private, link-local and loopback ranges: other sandboxes, the control plane, metadata', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      controlPlanePods: cp,
      deniedEgressCidrs: ['203.0.113.7/32', '2001:db8::/32'],
    });
    const [internet, dns] = policy.spec.egress;
    const blocks = internet!.to.map((peer) => ('ipBlock' in peer ? peer.ipBlock : null));
    expect(blocks[0]).toEqual({
      cidr: '0.0.0.0/0',
      except: [
        '10.0.0.0/8',
        '172.16.0.0/12',
        '192.168.0.0/16',
        '100.64.0.0/10',
        '169.254.0.0/16',
        '127.0.0.0/8',
        '192.88.99.0/24',
        '203.0.113.7/32',
      ],
    });
    expect(blocks[1]).toEqual({
      cidr: '::/0',
      except: [...DENIED_EGRESS_V6, '2001:db8::/32'],
    });
    expect(internet!.ports).toBeUndefined();
    // DNS only to the cluster resolver, only on port 53.
    expect(dns).toEqual({
      to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
      ports: [
        { protocol: 'UDP', port: 53 },
        { protocol: 'TCP', port: 53 },
      ],
    });
  });

  it('allows no egress at all with egress: none (Egress listed, no rule)', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      controlPlanePods: cp,
      egress: 'none',
    });
    expect(policy.spec.policyTypes).toContain('Egress');
    expect(policy.spec.egress).toEqual([]);
  });

  it('denies the IPv6 spellings of IPv4: NAT64, local-use NAT64, 6to4, Teredo, SIIT', () => {
    expect(DENIED_EGRESS_V6).toEqual(
      expect.arrayContaining([
        'fc00::/7',
        'fe80::/10',
        '::1/128',
        '64:ff9b::/96',
        '64:ff9b:1::/48',
        '2002::/16',
        '2001::/32',
        '::ffff:0:0:0/96',
      ]),
    );
  });

  it('admits only the api and worker Pods when the selector names them (not web, Postgres, Redis)', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      ...networkPolicyOptionsOf({
        controlPlaneSelector:
          'app.kubernetes.io/name=cubicle,app.kubernetes.io/instance=rel,app.kubernetes.io/component in (api, worker)',
      }),
    });
    const peer = policy.spec.ingress[0]!.from[0]!.podSelector;
    expect(peer).toEqual({
      matchLabels: { 'app.kubernetes.io/name': 'cubicle', 'app.kubernetes.io/instance': 'rel' },
      matchExpressions: [
        { key: 'app.kubernetes.io/component', operator: 'In', values: ['api', 'worker'] },
      ],
    });
    const pod = (component: string) => ({
      'app.kubernetes.io/name': 'cubicle',
      'app.kubernetes.io/instance': 'rel',
      'app.kubernetes.io/component': component,
    });
    expect(selectorMatches(peer, pod('api'))).toBe(true);
    expect(selectorMatches(peer, pod('worker'))).toBe(true);
    for (const other of ['web', 'postgresql', 'redis', 'migrate'])
      expect(selectorMatches(peer, pod(other)), other).toBe(false);
  });
});

describe('networkPolicyOptionsOf', () => {
  it('reads egress and denied CIDRs, refusing what is not a CIDR', () => {
    expect(
      networkPolicyOptionsOf({
        controlPlaneSelector: 'app=cubicle',
        egress: 'none',
        deniedEgressCidrs: ' 203.0.113.7/32, 2001:db8::/32 ',
      }),
    ).toEqual({
      controlPlanePods: { matchLabels: { app: 'cubicle' } },
      egress: 'none',
      deniedEgressCidrs: ['203.0.113.7/32', '2001:db8::/32'],
    });
    expect(parseCidrList('')).toEqual([]);
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fd00::/129', 'example.com/8', '1.2.3.4/8/1'])
      expect(() => parseCidrList(bad), bad).toThrow('not a CIDR');
  });
});

describe('parsePodSelector', () => {
  it('reads equality and "in" terms', () => {
    expect(parsePodSelector('a=b, c==d, e in (x,y)')).toEqual({
      matchLabels: { a: 'b', c: 'd' },
      matchExpressions: [{ key: 'e', operator: 'In', values: ['x', 'y'] }],
    });
  });
  it('refuses what would widen the selector: negation, notin, bare keys, empty', () => {
    for (const bad of ['a!=b', 'a notin (x)', '!a', 'a', 'a in ()', ' , '])
      expect(() => parsePodSelector(bad), bad).toThrow();
  });
});
