// helm for the chart tests: the binary scripts/lib/helm-tools.mjs builds into the tools cache,
// run with a private HELM_* home so the machine's own helm configuration never leaks in.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { HELM_VERSION, helmPath } from '../../../scripts/lib/helm-tools.mjs';
import type { KubeObject } from './dry-run.js';

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

const home = mkdtempSync(join(tmpdir(), 'cubicle-helm-home-'));

/** requireHelm returns the cached helm binary, or fails with how to build it (never skips). */
export function requireHelm(): string {
  const bin = helmPath();
  if (!existsSync(bin))
    throw new Error(
      `helm ${HELM_VERSION} is not built: ${bin} is missing. \`npm test\` builds it during its ` +
        'bootstrap; to build it alone run `node scripts/lib/helm-tools.mjs` (≈ 2 min the first time).',
    );
  return bin;
}

/** helm runs the helm CLI and returns its exit code and output (never throws on a non-zero exit). */
export function helm(args: string[], env: Record<string, string> = {}): HelmResult {
  const result = spawnSync(requireHelm(), args, {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_DATA_HOME: join(home, 'data'),
      ...env,
    },
  });
  return { code: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** parseManifests splits `helm template` output into objects (empty documents dropped). */
export function parseManifests(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`unparsable manifest: ${doc.errors[0]!.message}`);
      return doc.toJS() as KubeObject | null;
    })
    .filter((obj): obj is KubeObject => obj !== null && typeof obj === 'object');
}
