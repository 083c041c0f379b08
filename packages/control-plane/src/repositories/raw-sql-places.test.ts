// Raw SQL is written one way, in one kind of place: as `statement('cubicle_…', text)` constants in
// a repository module (a `src/repositories/` folder of its package), run through sqlOf. This test
// reads every TypeScript source of the apps and packages (tests and generated code aside) and
// fails on raw SQL anywhere else — a `$queryRaw` template, a `Prisma.sql` fragment, an inline
// `pool.query('…')`, a statement declared outside a repository — naming the file and the line.
// SQL spread over the services is how the same lookup came to be written three times with three
// liveness rules; in one module per table family each statement is found, named and reused.
import { describe, expect, it } from 'vitest';
import { appAndPackageSources, lineOf, readSource } from '../../test/support/repo-sources.js';

/** Where raw SQL may be written, and why there. */
const PLACES: { where: (file: string) => boolean; why: string }[] = [
  {
    where: (f) => /^(?:apps|packages)\/[^/]+\/src\/(?:.+\/)?repositories\//.test(f),
    why: 'a repository module: its table family owns its statements and row mappers',
  },
  {
    where: (f) => f.startsWith('packages/db/src/'),
    why: 'the database package: sqlOf itself, pingDatabase, and the migration runner (it applies migration files, not statements)',
  },
  {
    where: (f) => f === 'packages/control-plane/src/lifecycle/state-statements.ts',
    why: "the lifecycle's statements: only it may move a state or compare a claim status (state-writes.test.ts, claim-status.test.ts)",
  },
];

const RAW_SQL_PATTERNS: { what: string; re: RegExp }[] = [
  { what: 'a Prisma raw query', re: /\$(?:query|execute)Raw(?:Unsafe)?\b/g },
  { what: 'a Prisma SQL fragment', re: /\bPrisma\.(?:sql|raw|join|empty)\b/g },
  // node-postgres: `pool.query('…')`, `client.query({ name, text })`, `pool.query(text)`. No
  // other `.query(` method is called in these sources; a new one would be named here.
  { what: 'a node-postgres query', re: /\.query\s*(?:<[^()]*?>)?\s*\(/g },
  {
    what: 'a statement declared outside a repository',
    re: /\bstatement\s*(?:<[^()]*?>)?\s*\(\s*['"`]cubicle_/g,
  },
];

/** rawSql lists the raw SQL written in one source text, as `line: what`. */
export function rawSql(text: string): string[] {
  const found: string[] = [];
  for (const { what, re } of RAW_SQL_PATTERNS)
    for (const m of text.matchAll(re)) found.push(`${lineOf(text, m.index)}: ${what}`);
  return found;
}

const isAllowed = (file: string) => PLACES.some((p) => p.where(file));

describe('raw SQL', () => {
  const files = appAndPackageSources();
  const offenders = files
    .filter((f) => !isAllowed(f))
    .map((f) => ({ file: f, found: rawSql(readSource(f)) }))
    .filter((o) => o.found.length > 0);

  it('is written only in repository modules', () => {
    expect(files.length).toBeGreaterThan(100);
    const outside = offenders.flatMap((o) => o.found.map((w) => `${o.file}:${w}`));
    expect(outside).toEqual([]);
  });

  it('is found in the repository modules (the scan sees it there)', () => {
    const inside = files.filter((f) => isAllowed(f) && f.includes('/repositories/'));
    expect(inside).toContain('packages/control-plane/src/repositories/claims.ts');
    expect(inside.flatMap((f) => rawSql(readSource(f))).length).toBeGreaterThan(10);
  });

  it('recognises each form, and not statements run through sqlOf', () => {
    const raw = [
      'const rows = await db.$queryRaw`SELECT 1`;',
      'await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${key}))`;',
      'await tx.$queryRawUnsafe(text, ...values);',
      'await tx.$executeRawUnsafe(text, id);',
      'const where = Prisma.sql`u.tenant_id = ${tenantId}`;',
      "const { rows } = await sqlPoolOf(db).query<{ id: string }>({ name: 'cubicle_x_v1', text });",
      "await pool.query('SELECT 1 FROM claims WHERE id = $1', [id]);",
      'const { rows } = await sqlPoolOf(db).query<ClaimJsonRow>(query);',
      'await client.query(`UPDATE runs SET status = $2 WHERE id = $1`, values);',
      "const st = statement<{ n: number }, [string]>('cubicle_count_v1', 'SELECT count(*)::int AS n');",
      "const st = statement(\n  'cubicle_count_v1',\n  'SELECT 1',\n);",
    ];
    for (const r of raw) expect(rawSql(r), r).toHaveLength(1);
    const plain = [
      'const row = await sqlOf(db).row(claimView, claimId, tenantId);',
      'await sqlOf(tx).exec(advisoryXactLock, key);',
      'const client = await sqlPoolOf(db).connect();',
      "db.claim.findMany({ where: { status: 'pending' } })",
      'const q = request.query;',
      "import { statement } from '@cubicle/db';",
      "new Histogram({ name: 'cubicle_claim_duration_seconds' })",
    ];
    for (const p of plain) expect(rawSql(p), p).toEqual([]);
  });
});
