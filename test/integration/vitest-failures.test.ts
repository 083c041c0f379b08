import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { countResults, failedTests } from '../../scripts/lib/test-run.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cubicle vitest failures '));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// `npm test` repeats each Vitest failure at the very end (CI keeps only the log's tail): these
// are the names read from a real Vitest run over a suite with a pass, a failure and a file that
// cannot load.
describe('the closing lines name what failed', () => {
  it(
    'reads failed tests and broken files from Vitest’s JSON report',
    { timeout: 120_000 },
    async () => {
      writeFileSync(join(dir, 'vitest.config.mjs'), 'export default {};\n');
      writeFileSync(
        join(dir, 'outcomes.test.mjs'),
        [
          "import { describe, expect, it } from 'vitest';",
          "describe('group', () => {",
          "  it('passes', () => expect(1).toBe(1));",
          "  it('fails', () => expect('got').toBe('wanted'));",
          '});',
          '',
        ].join('\n'),
      );
      writeFileSync(join(dir, 'broken.test.mjs'), "import './missing-module.mjs';\n");
      const report = join(dir, 'report.json');
      const run = promisify(execFile)(
        join(root, 'node_modules/.bin/vitest'),
        ['run', '--root', dir, '--reporter=json', `--outputFile.json=${report}`],
        { cwd: dir },
      );
      await expect(run).rejects.toMatchObject({ code: 1 });
      const json = JSON.parse(readFileSync(report, 'utf8'));
      expect(countResults(json)).toEqual({ passed: 1, failed: 2, skipped: 0 });
      const failures = failedTests(json, dir);
      expect(failures.map((f) => [f.file, f.name])).toEqual(
        expect.arrayContaining([
          ['outcomes.test.mjs', 'group fails'],
          ['broken.test.mjs', '(the file itself)'],
        ]),
      );
      expect(failures).toHaveLength(2);
      expect(failures.find((f) => f.name === 'group fails')?.message).toMatch(/wanted/);
      expect(failures.find((f) => f.file === 'broken.test.mjs')?.message).toMatch(/missing-module/);
    },
  );
});
