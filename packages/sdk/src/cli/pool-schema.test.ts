import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import * as schemas from './pool-schema.js';

const { PoolSpec } = schemas;

const dir = mkdtempSync(join(tmpdir(), 'cubicle-pool-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the published pool schema', () => {
  it('is one self-contained module with the contract’s own rules (no private package, no zod import)', async () => {
    const script = fileURLToPath(new URL('../../scripts/bundle-cli-schemas.mjs', import.meta.url));
    const outfile = join(dir, 'pool-schema.js');
    execFileSync(process.execPath, [script, '--outfile', outfile]);
    const text = readFileSync(outfile, 'utf8');
    // Nothing of the repository is imported: not the private contract, not zod (it is inside).
    expect(/(from|import\(|require\()\s*["'](zod|@cubicle\/)/.test(text)).toBe(false);
    const bundled = (await import(outfile)) as typeof schemas;
    for (const spec of [
      { image: 'local' },
      { image: 'local', autoscaling: { min: 2, initial: 1, max: 3 } },
      { image: 'local', claim_ttl_seconds: 100, max_claim_lifetime_seconds: 10 },
      { image: 'local', memory_mb: 1 },
      { image: 'a\u0000b' },
    ]) {
      const [a, b] = [PoolSpec.safeParse(spec), bundled.PoolSpec.safeParse(spec)];
      expect(b.success).toBe(a.success);
      expect(b.error?.issues.map((i) => i.message)).toEqual(a.error?.issues.map((i) => i.message));
    }
    expect(bundled.ResourceName.safeParse('Not_A_Name').success).toBe(false);
  }, 20_000);
});
