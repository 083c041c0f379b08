// `npm test`: Vitest with its default reporter on the terminal and a JSON report on the side,
// from which we print one closing line: "N passed, N failed, N skipped".
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** countResults reads Vitest's JSON report; a file that failed without a failed test (an import error) counts as one failure. */
export function countResults(report) {
  const brokenFiles = (report.testResults ?? []).filter(
    (file) =>
      file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed'),
  ).length;
  return {
    passed: report.numPassedTests ?? 0,
    failed: (report.numFailedTests ?? 0) + brokenFiles,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

/**
 * failedTests names each failure in Vitest's JSON report (file, test, the message's first line).
 * They are printed again at the very end because a log's tail is often all that is kept (CI's
 * record is), and Vitest's own list sits thousands of lines above it.
 */
export function failedTests(report, root = '') {
  const out = [];
  for (const file of report.testResults ?? []) {
    const path = root && file.name?.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const test of failed) {
      out.push({
        file: path,
        name: test.fullName ?? test.title,
        message: firstLine(test.failureMessages?.[0]),
      });
    }
    if (file.status === 'failed' && failed.length === 0) {
      out.push({ file: path, name: '(the file itself)', message: firstLine(file.message) });
    }
  }
  return out;
}

function firstLine(text) {
  return (
    (text ?? '')
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim()
      .slice(0, 300) ?? ''
  );
}

/**
 * runVitest streams `vitest run` (extra args pass through), prints the closing line and resolves
 * with Vitest's exit code. With `onCounts` the counts (and `failures`, see failedTests) go there
 * instead of the closing line (the caller prints one line for every suite it ran).
 */
export async function runVitest(root, extraArgs, { onCounts } = {}) {
  const reportDir = mkdtempSync(join(tmpdir(), 'cubicle-vitest-'));
  const reportFile = join(reportDir, 'report.json');
  const args = [
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${reportFile}`,
    ...extraArgs,
  ];
  const child = spawn(join(root, 'node_modules/.bin/vitest'), args, {
    cwd: root,
    stdio: 'inherit',
  });
  // Ctrl-C reaches Vitest directly (same process group); a SIGTERM sent to us alone is passed on.
  const onSigint = () => {};
  const onSigterm = () => child.kill('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  const code = await new Promise((resolve) => {
    child.once('error', (error) => {
      console.error(`could not run vitest: ${error.message}`);
      resolve(1);
    });
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  process.off('SIGINT', onSigint);
  process.off('SIGTERM', onSigterm);

  let counts = { passed: 0, failed: 0, skipped: 0, failures: [] };
  if (existsSync(reportFile)) {
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    counts = { ...countResults(report), failures: failedTests(report, root) };
  } else console.error('vitest wrote no JSON report; the counts below are empty');
  rmSync(reportDir, { recursive: true, force: true });
  if (onCounts) onCounts(counts);
  else {
    printFailures(counts.failures);
    console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
  return code;
}

/**
 * buildTofuBeside builds (or finds) OpenTofu in a child process at nice 10 and resolves with
 * `{ path, lines }` (its output, for the caller to print later). `npm test` runs it beside
 * Vitest: only the Go tests after Vitest need OpenTofu, its first build takes ≈ 5 min of both
 * cores, and at nice 10 it takes the CPU Vitest leaves while its tests wait.
 */
export function buildTofuBeside(root) {
  const child = spawn(
    'nice',
    ['-n', '10', process.execPath, join(root, 'scripts/lib/tofu-tools.mjs')],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d.toString()));
  child.stderr.on('data', (d) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      const lines = out.trimEnd().split('\n');
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve({ path: JSON.parse(lines.at(-1)).tofu, lines: lines.slice(0, -1) });
      } catch (error) {
        reject(new Error(`OpenTofu build failed (${error.message}): ${(err || out).trim()}`));
      }
    });
  });
}

/** printFailures lists failed tests, one line each (nothing when there are none). */
export function printFailures(failures) {
  if (!failures?.length) return;
  console.log(`vitest: ${failures.length} failed —`);
  for (const f of failures)
    console.log(`  ✗ ${f.file} › ${f.name}${f.message ? ` — ${f.message}` : ''}`);
}
