// Every claim and sandbox state write goes through the lifecycle: this module's TypeScript and
// the SQL function sources in packages/db/sql/functions. This test reads every TypeScript source
// of the apps and packages (tests and generated code aside) and fails on a state write made
// anywhere else, naming the file and the line.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appAndPackageSources,
  lineOf,
  readSource,
  repoRoot as repo,
  sourcesUnder as sources,
} from '../../test/support/repo-sources.js';
import { CLAIM_TRANSITIONS, SANDBOX_TRANSITIONS } from './states.js';

const lifecycleDir = 'packages/control-plane/src/lifecycle/';

/** The SQL functions that move states; only the lifecycle may call them. */
const STATE_FUNCTIONS = [
  'cubicle_claim_batch',
  'cubicle_end_claim',
  'cubicle_fulfil_pending',
  'cubicle_take_warm_sandbox',
];

const WRITE_PATTERNS: { what: string; re: RegExp }[] = [
  // Raw SQL: an UPDATE of either table that sets its state column, or an INSERT into it.
  {
    what: 'SQL UPDATE of a state',
    re: /UPDATE\s+"?(?:sandboxes|claims)"?\b(?:\s+(?:AS\s+)?\w+)?\s+SET\b(?:(?!\b(?:WHERE|FROM|RETURNING)\b)[^;`])*?\b(?:\w+\.)?"?(?:state|status)"?\s*=/gi,
  },
  { what: 'SQL INSERT of a claim or sandbox', re: /INSERT\s+INTO\s+"?(?:sandboxes|claims)"?\b/gi },
  // Prisma: creating rows, or an update whose data names the state.
  { what: 'Prisma create', re: /\.(?:sandbox|claim)\.(?:create|createMany|upsert)\s*\(/g },
  {
    what: 'Prisma state update',
    re: /\.(?:sandbox|claim)\.(?:update|updateMany)\s*\(\s*\{[\s\S]*?\bdata\s*:\s*\{[^}]*?\b(?:state|status)\s*:/g,
  },
  {
    what: 'a state-moving SQL function',
    re: new RegExp(`\\b(?:${STATE_FUNCTIONS.join('|')})\\s*\\(`, 'g'),
  },
];

/** stateWrites lists the state writes in one source text, as `line: what`. */
export function stateWrites(text: string): string[] {
  const found: string[] = [];
  for (const { what, re } of WRITE_PATTERNS)
    for (const m of text.matchAll(re)) {
      // A Prisma update matched lazily up to a `state:` must not run past its own call.
      if (what === 'Prisma state update' && /\)\s*;/.test(m[0])) continue;
      const line = lineOf(text, m.index);
      found.push(`${line}: ${what}`);
    }
  return found;
}

describe('claim and sandbox state writes', () => {
  it('are made only by the lifecycle module', () => {
    const files = appAndPackageSources();
    expect(files.length).toBeGreaterThan(100);
    const outside = files
      .filter((f) => !f.startsWith(lifecycleDir))
      .flatMap((f) => stateWrites(readSource(f)).map((w) => `${f}:${w}`));
    expect(outside).toEqual([]);
  });

  it('are made by the lifecycle module (the scan sees them there)', () => {
    const inside = sources(lifecycleDir.slice(0, -1)).flatMap((f) =>
      stateWrites(readSource(f)).map((w) => `${relative(lifecycleDir, f)}:${w}`),
    );
    expect(inside.some((w) => w.includes('Prisma state update'))).toBe(true);
    expect(inside.some((w) => w.includes('Prisma create'))).toBe(true);
    expect(inside.some((w) => w.includes('state-moving SQL function'))).toBe(true);
    // The raw SQL writes live in the function sources the lifecycle calls.
    const sqlDir = 'packages/db/sql/functions';
    const inSql = readdirSync(join(repo, sqlDir)).flatMap((f) =>
      stateWrites(readFileSync(join(repo, sqlDir, f), 'utf8')).map((w) => `${f}:${w}`),
    );
    expect(inSql.some((w) => w.includes('SQL UPDATE of a state'))).toBe(true);
    expect(inSql.some((w) => w.includes('SQL INSERT of a claim or sandbox'))).toBe(true);
  });

  it('recognises each kind of write, and not reads or other columns', () => {
    const writes = [
      "await tx.$executeRaw`UPDATE sandboxes SET state = 'warm' WHERE id = ${id}`",
      "UPDATE claims c SET updated_at = now(), status = 'released' WHERE c.id = $1",
      'INSERT INTO claims (id) VALUES ($1)',
      "db.sandbox.updateMany({ where: { id }, data: { state: 'failed' } })",
      "db.claim.update({ where: { id }, data: { lastHeartbeatAt: now, status: 'active' } })",
      'db.sandbox.createMany({ data: rows })',
      'SELECT * FROM cubicle_fulfil_pending($1, $2, $3)',
    ];
    for (const w of writes) expect(stateWrites(w), w).toHaveLength(1);
    const reads = [
      "SELECT id FROM sandboxes WHERE state = 'warm'",
      "UPDATE claims SET last_heartbeat_at = now() WHERE status = 'active'",
      "db.claim.updateMany({ where: { id, status: 'active' }, data: { lastHeartbeatAt: now } }); db.run.update({ data: { status: 'x' } })",
      "db.sandbox.findMany({ where: { state: 'warm' } })",
    ];
    for (const r of reads) expect(stateWrites(r), r).toEqual([]);
  });
});

describe('the lifecycle tables', () => {
  it('lead every sandbox state somewhere and end in deleted', () => {
    const reachable = new Set(SANDBOX_TRANSITIONS.map((t) => t.to));
    expect([...reachable].sort()).toEqual(
      ['claimed', 'deleted', 'failed', 'provisioning', 'releasing', 'warm'].sort(),
    );
    expect(SANDBOX_TRANSITIONS.filter((t) => t.from === 'deleted')).toEqual([]);
    for (const t of SANDBOX_TRANSITIONS)
      expect(t.reasons.length, `${t.from}→${t.to}`).toBeGreaterThan(0);
  });

  it('release claims only from a live status, with a release reason', () => {
    const ends = CLAIM_TRANSITIONS.filter((t) => t.to === 'released');
    expect(ends.map((t) => t.from).sort()).toEqual(['active', 'pending']);
    expect(CLAIM_TRANSITIONS.filter((t) => t.from === 'released')).toEqual([]);
  });
});
