import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { egressEnvFields, egressInstallationOf, installationOf } from './egress-installation.js';

const Env = z.object(egressEnvFields);

describe('egress installation settings', () => {
  it('are closed by default: every pool none, no range opened', () => {
    const env = Env.parse({});
    expect(egressInstallationOf(env)).toEqual({
      default: 'none',
      operator: { allow: [], hostAddresses: [] },
    });
    expect(installationOf({})).toEqual({ default: 'none', operator: { allow: [] } });
  });

  it('read the operator ranges as comma-separated CIDRs or addresses', () => {
    const env = Env.parse({
      CUBICLE_EGRESS_DEFAULT: 'open',
      CUBICLE_EGRESS_OPERATOR_ALLOW: '10.20.0.0/16, fd00:ec2::254 ,192.168.1.5',
      CUBICLE_EGRESS_HOST_ADDRESSES: '198.51.100.200',
    });
    expect(egressInstallationOf(env)).toEqual({
      default: 'open',
      operator: {
        allow: ['10.20.0.0/16', 'fd00:ec2::254', '192.168.1.5'],
        hostAddresses: ['198.51.100.200'],
      },
    });
  });

  it('refuse a bad mode or range, naming the variable', () => {
    const bad = Env.safeParse({
      CUBICLE_EGRESS_DEFAULT: 'allowlist',
      CUBICLE_EGRESS_OPERATOR_ALLOW: '10.0.0.0/8,example.com',
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['CUBICLE_EGRESS_DEFAULT', 'CUBICLE_EGRESS_OPERATOR_ALLOW']),
    );
  });
});
