// "The claim is live" is decided once: isClaimLive (claim-liveness.ts) and its SQL twin
// cubicle_claim_is_live. This test reads every TypeScript source of the apps and packages (tests
// and generated code aside) and fails on a comparison of a status with 'active' made outside the
// lifecycle module, naming the file and the line: such a comparison is a liveness rule of its own,
// and the ones found before it existed forgot the deadline or read Date.now instead of the clock.
// The SDKs are not read: they render what the API answered, they decide nothing for the server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appAndPackageSources,
  lineOf,
  readSource,
  repoRoot as repo,
} from '../../test/support/repo-sources.js';

const lifecycleDir = 'packages/control-plane/src/lifecycle/';
/** Clients of the public API, not deciders: they show a claim's status as the API gave it. */
const notDeciding = ['packages/sdk/'];

const COMPARISON_PATTERNS: { what: string; re: RegExp }[] = [
  // SQL (`c.status = 'active'`, `status <> 'active'`) and TypeScript (`claim.status !== 'active'`,
  // `row.claim_status === 'active'`), either side first.
  {
    what: "a status compared with 'active'",
    re: /\b[\w.]*status"?\s*(?:={1,3}|!==?|<>)\s*'active'/gi,
  },
  {
    what: "'active' compared with a status",
    re: /'active'\s*(?:={1,3}|!==?|<>)\s*"?[\w.]*status\b/gi,
  },
  // Prisma: a where clause naming the status (`{ status: 'active' }`).
  { what: "a Prisma filter on status 'active'", re: /\bstatus\s*:\s*'active'/g },
];

/** statusComparisons lists the claim-status comparisons in one source text, as `line: what`. */
export function statusComparisons(text: string): string[] {
  const found: string[] = [];
  for (const { what, re } of COMPARISON_PATTERNS)
    for (const m of text.matchAll(re)) {
      const line = lineOf(text, m.index);
      found.push(`${line}: ${what}`);
    }
  return found;
}

describe('claim status comparisons', () => {
  it('are made only by the lifecycle module (isClaimLive, cubicle_claim_is_live)', () => {
    const files = appAndPackageSources();
    expect(files.length).toBeGreaterThan(100);
    const outside = files
      .filter((f) => !f.startsWith(lifecycleDir) && !notDeciding.some((d) => f.startsWith(d)))
      .flatMap((f) => statusComparisons(readSource(f)).map((w) => `${f}:${w}`));
    expect(outside).toEqual([]);
  });

  it('are made by the lifecycle module (the scan sees the rule there)', () => {
    const inside = readFileSync(join(repo, lifecycleDir, 'claim-liveness.ts'), 'utf8');
    expect(statusComparisons(inside).length).toBeGreaterThan(0);
  });

  it('recognises each form, and not other columns or values', () => {
    const comparisons = [
      "WHERE c.id = $3 AND c.status = 'active' AND c.expires_at > $4",
      "SELECT id FROM claims WHERE id = ANY($1::text[]) AND status = 'active'",
      'WHERE "status" <> \'active\'',
      "if (claim.status !== 'active' || claim.expires_at.getTime() <= Date.now())",
      "if (row.claim_status !== 'active') run.requestEnd()",
      "status: settled.status === 'active' ? 201 : 202",
      "if ('active' === claim.status) return",
      "db.claim.findMany({ where: { sandboxId: row.id, status: 'active' } })",
    ];
    for (const c of comparisons) expect(statusComparisons(c), c).toHaveLength(1);
    const others = [
      'WHERE cubicle_claim_is_live(c.status, c.expires_at, $4)',
      "if (resolved.state !== 'active')",
      "db.pool.findMany({ where: { state: 'active' } })",
      "SELECT count(*) FROM claims WHERE status IN ('pending', 'active')",
      "UPDATE claims SET status = 'released' WHERE status <> 'released'",
      "z.enum(['pending', 'active', 'released'])",
      "case 'active':",
    ];
    for (const o of others) expect(statusComparisons(o), o).toEqual([]);
  });
});
