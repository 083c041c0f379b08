import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../scripts/lib/python-env.mjs';
import { countJunit } from '../../scripts/lib/python-tests.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cubicle-pytest-counts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The closing line of `npm test` counts the Python step from pytest's JUnit report: these are
// the counts of a real pytest run (the SDK's venv) over a suite with each outcome.
describe('the Python step counts pytest outcomes', () => {
  it('counts passes, failures, errors as failures, and skips', { timeout: 180_000 }, async () => {
    const python = await ensurePythonEnv(root, { log: () => {} });
    writeFileSync(
      join(dir, 'test_outcomes.py'),
      [
        'import pytest',
        'def test_a(): assert True',
        'def test_b(): assert True',
        'def test_c(): assert 1 == 2',
        '@pytest.fixture',
        'def broken(): raise RuntimeError("fixture")',
        'def test_d(broken): pass',
        '@pytest.mark.skip(reason="shown as skipped")',
        'def test_e(): pass',
        '',
      ].join('\n'),
    );
    const report = join(dir, 'junit.xml');
    const run = promisify(execFile)(
      python,
      ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', `--junitxml=${report}`, dir],
      { cwd: dir },
    );
    await expect(run).rejects.toMatchObject({ code: 1 });
    expect(countJunit(readFileSync(report, 'utf8'))).toEqual({ passed: 2, failed: 2, skipped: 1 });
  });
});
