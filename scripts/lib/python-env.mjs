// The Python SDK's test environment: a venv in the tools cache (~/.cache/cubicle-tools/python/
// <hash>), keyed by the hash of clients/python/requirements.lock and the interpreter's version, so
// a changed lock or a new Python gets a fresh venv and an unchanged one costs a stat. The lock
// pins every package with its sha256; pip installs wheels only, with its progress bar shown.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubeToolsDir } from './kube-paths.mjs';
import { capture, run } from './run.mjs';
import { withToolLock } from './tool-lock.mjs';
import { dim, say, UserError } from './ui.mjs';

const MIN_PYTHON = [3, 10];

/** findPython returns CUBICLE_PYTHON or python3 with its version, or throws saying what to install. */
async function findPython() {
  const python = process.env.CUBICLE_PYTHON || 'python3';
  const { code, stdout } = await capture(python, [
    '-c',
    'import sys, venv, ensurepip; print("%d.%d.%d" % sys.version_info[:3])',
  ]);
  if (code !== 0) {
    throw new UserError(
      `${python} with the venv module is needed for the Python SDK's tests ` +
        `(apt-get install python3 python3-venv; the bootstrap does this on Debian/Ubuntu)`,
    );
  }
  const version = stdout.trim();
  const [major, minor] = version.split('.').map(Number);
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new UserError(`${python} is ${version}: the Python SDK needs 3.10 or newer`);
  }
  return { python, version };
}

/**
 * ensurePythonEnv creates (once) the venv for clients/python and resolves with its interpreter.
 * A half-made venv (a killed pip) has no stamp and is made again.
 */
export async function ensurePythonEnv(root, { log = say } = {}) {
  const lockFile = join(root, 'clients/python/requirements.lock');
  const { python, version } = await findPython();
  const key = createHash('sha256')
    .update(readFileSync(lockFile))
    .update(`\0${version}`)
    .digest('hex')
    .slice(0, 16);
  const base = join(kubeToolsDir(), 'python');
  const dir = join(base, key);
  const interpreter = join(dir, 'bin/python');
  const stamp = join(dir, '.complete');
  if (existsSync(stamp)) {
    log(dim(`python ${version} venv: ${dir}`));
    return interpreter;
  }
  mkdirSync(base, { recursive: true });
  await withToolLock(
    { dir: base, lockName: `${key}.lock`, what: 'the Python venv', log },
    async () => {
      if (existsSync(stamp)) return;
      rmSync(dir, { recursive: true, force: true });
      log(`creating a Python ${version} venv in ${dir}`);
      await run(python, ['-m', 'venv', dir]);
      await run(interpreter, [
        '-m',
        'pip',
        'install',
        '--disable-pip-version-check',
        '--require-hashes',
        '--only-binary=:all:',
        '--progress-bar=on',
        '-r',
        lockFile,
      ]);
      writeFileSync(stamp, `${new Date().toISOString()}\n`);
    },
  );
  return interpreter;
}
