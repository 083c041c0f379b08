import { describe, expect, it } from 'vitest';
import { buildSandboxNetworkPolicy } from './network-policy.js';

describe('buildSandboxNetworkPolicy', () => {
  const cp = { 'app.kubernetes.io/name': 'cubicle' };

  it('admits only control-plane pods, only on the guest and VNC ports', () => {
    const policy = buildSandboxNetworkPolicy({ namespace: 'sbx', controlPlanePodLabels: cp });
    expect(policy.metadata?.namespace).toBe('sbx');
    expect(policy.spec?.podSelector).toEqual({
      matchLabels: { 'app.kubernetes.io/managed-by': 'cubicle' },
    });
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: cp } }],
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
        controlPlanePodLabels: { 'app.kubernetes.io/managed-by': 'cubicle' },
      }),
    ).toThrow('also select sandboxes');
    expect(() =>
      buildSandboxNetworkPolicy({ namespace: 'sbx', controlPlanePodLabels: {} }),
    ).toThrow('also select sandboxes');
  });

  it('selects the control plane namespace when it is elsewhere (one peer: both must match)', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      controlPlanePodLabels: cp,
      controlPlaneNamespace: 'cubicle-system',
    });
    expect(policy.spec?.ingress?.[0]?.from).toEqual([
      {
        podSelector: { matchLabels: cp },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'cubicle-system' } },
      },
    ]);
  });

  it('denies egress to private, link-local and loopback ranges: other sandboxes, the control plane, metadata', () => {
    const policy = buildSandboxNetworkPolicy({
      namespace: 'sbx',
      controlPlanePodLabels: cp,
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
        '203.0.113.7/32',
      ],
    });
    expect(blocks[1]).toEqual({
      cidr: '::/0',
      except: ['fc00::/7', 'fe80::/10', '::1/128', '2001:db8::/32'],
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
      controlPlanePodLabels: cp,
      egress: 'none',
    });
    expect(policy.spec.policyTypes).toContain('Egress');
    expect(policy.spec.egress).toEqual([]);
  });
});
