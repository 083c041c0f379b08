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
    expect(policy.spec?.policyTypes).toEqual(['Ingress']);
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
});
