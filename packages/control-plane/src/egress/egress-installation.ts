import { parseCidr } from '@cubicle/egress';
import { z } from 'zod';
import type { EgressInstallation, Resources } from '../resources.js';

export type { EgressInstallation };

/** Without settings: every pool `none`, no range opened (the issue's default, `npm start`'s too). */
export const CLOSED_INSTALLATION: EgressInstallation = { default: 'none', operator: { allow: [] } };

/** installationOf reads a control plane's egress settings, closed when none were given. */
export const installationOf = (deps: Partial<Pick<Resources, 'egress'>>): EgressInstallation =>
  deps.egress ?? CLOSED_INSTALLATION;

/** parseCidrList reads `cidr[,cidr…]` (spaces allowed, empty = none), or null when one is not a CIDR. */
export function parseCidrList(text: string): string[] | null {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.every((s) => parseCidr(s) !== null) ? items : null;
}

const cidrList = (what: string) =>
  z
    .string()
    .default('')
    .refine(
      (text) => parseCidrList(text) !== null,
      `must be ${what}: comma-separated CIDRs or addresses`,
    )
    .transform((text) => parseCidrList(text)!);

/**
 * egressEnvFields are the operator's egress variables, the same in the API and the worker (each
 * process's env.ts spreads them into its schema; egressInstallationOf turns them into settings).
 */
export const egressEnvFields = {
  /** Egress of pools without their own `egress`: `none` (default) or `open`. */
  CUBICLE_EGRESS_DEFAULT: z.enum(['none', 'open']).default('none'),
  /** Ranges of the closed floor (private, link-local, metadata…) opened to every sandbox, e.g. a mirror. */
  CUBICLE_EGRESS_OPERATOR_ALLOW: cidrList('the ranges sandboxes may reach despite the floor'),
  /** The control plane's and nodes' own public addresses, closed like private ranges. */
  CUBICLE_EGRESS_HOST_ADDRESSES: cidrList('the control plane and node addresses'),
};

/** egressInstallationOf turns parsed egressEnvFields into the control plane's settings. */
export function egressInstallationOf(env: {
  CUBICLE_EGRESS_DEFAULT: 'none' | 'open';
  CUBICLE_EGRESS_OPERATOR_ALLOW: string[];
  CUBICLE_EGRESS_HOST_ADDRESSES: string[];
}): EgressInstallation {
  return {
    default: env.CUBICLE_EGRESS_DEFAULT,
    operator: {
      allow: env.CUBICLE_EGRESS_OPERATOR_ALLOW,
      hostAddresses: env.CUBICLE_EGRESS_HOST_ADDRESSES,
    },
  };
}
