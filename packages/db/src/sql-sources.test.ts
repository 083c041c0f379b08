// The SQL functions' sources (packages/db/sql/functions/*.sql) are what people edit; migrations
// hold snapshots of them (scripts/emit-function-migration.mjs). This fails when the newest
// migration defining a function holds other text than its source, the way the committed
// openapi.json is checked against the contract: a source edited without a new migration, or a
// migration edited by hand.
//
// Compared: each function's statement, from `CREATE [OR REPLACE] FUNCTION name(` to the `;` that
// follows its closing dollar quote, with every run of whitespace (spaces, tabs, newlines)
// collapsed to one space and the ends trimmed. Comments before the statement are not compared;
// comments inside the body are, as any other text.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultMigrationsDir } from './migrate/index.js';

const sourcesDir = join(defaultMigrationsDir, '..', '..', 'sql', 'functions');

/** functionStatement returns the normalised statement defining `name` in `sql`, or null. */
export function functionStatement(sql: string, name: string): string | null {
  const start = sql.search(new RegExp(`CREATE\\s+(OR\\s+REPLACE\\s+)?FUNCTION\\s+${name}\\s*\\(`));
  if (start < 0) return null;
  const open = sql.indexOf('$$', start);
  const close = open < 0 ? -1 : sql.indexOf('$$', open + 2);
  const end = close < 0 ? -1 : sql.indexOf(';', close + 2);
  if (end < 0) throw new Error(`the definition of ${name} does not end in a dollar-quoted body`);
  return normalise(sql.slice(start, end + 1));
}

const normalise = (text: string) => text.replace(/\s+/g, ' ').trim();

const sources = readdirSync(sourcesDir)
  .filter((f) => f.endsWith('.sql'))
  .map((f) => ({ name: f.slice(0, -4), text: readFileSync(join(sourcesDir, f), 'utf8') }));
const migrations = readdirSync(defaultMigrationsDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort()
  .map((name) => ({
    name,
    sql: readFileSync(join(defaultMigrationsDir, name, 'migration.sql'), 'utf8'),
  }));

describe('SQL function sources', () => {
  it('has the lifecycle functions as sources', () => {
    expect(sources.map((s) => s.name).sort()).toEqual(
      expect.arrayContaining([
        'cubicle_claim_batch',
        'cubicle_claim_expiry',
        'cubicle_count_live_claims',
        'cubicle_fulfil_pending',
        'cubicle_take_warm_sandbox',
      ]),
    );
  });

  for (const source of sources) {
    it(`the newest migration defining ${source.name} holds its source`, () => {
      const expected = functionStatement(source.text, source.name);
      expect(expected, `sql/functions/${source.name}.sql defines ${source.name}`).not.toBeNull();
      const newest = migrations.findLast((m) => functionStatement(m.sql, source.name) !== null);
      expect(newest, `a migration defines ${source.name}`).toBeDefined();
      expect(
        functionStatement(newest!.sql, source.name),
        `${newest!.name} differs from sql/functions/${source.name}.sql: emit a new migration ` +
          'with packages/db/scripts/emit-function-migration.mjs',
      ).toBe(expected);
    });
  }

  it('the comparison sees a changed body and ignores only whitespace', () => {
    const sql =
      'CREATE OR REPLACE FUNCTION f(a int)\nRETURNS int LANGUAGE sql AS $$\n  SELECT a\n$$;';
    expect(functionStatement(sql.replace(/\n\s*/g, '   '), 'f')).toBe(functionStatement(sql, 'f'));
    expect(functionStatement(sql.replace('SELECT a', 'SELECT a + 1'), 'f')).not.toBe(
      functionStatement(sql, 'f'),
    );
    expect(functionStatement(sql, 'g')).toBeNull();
  });
});
