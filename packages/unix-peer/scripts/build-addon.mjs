// Builds native/unix_peer.c into dist/unix_peer.node with the system C compiler (cc). The addon
// declares the Node-API functions it uses itself, so nothing but a compiler and libc headers is
// needed (Debian: gcc, libc6-dev; the bootstrap installs them). Skipped when up to date.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../native/unix_peer.c', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/', import.meta.url));
const output = `${outDir}unix_peer.node`;

if (existsSync(output) && statSync(output).mtimeMs >= statSync(source).mtimeMs) process.exit(0);
mkdirSync(outDir, { recursive: true });
const compiler = process.env.CC || 'cc';
try {
  execFileSync(
    compiler,
    [
      '-shared',
      '-fPIC',
      '-O2',
      '-Wall',
      '-Wextra',
      '-Werror',
      '-fvisibility=hidden',
      '-o',
      // Built beside and renamed over: running processes keep the copy they loaded intact.
      `${output}.tmp`,
      source,
    ],
    { stdio: 'inherit' },
  );
  renameSync(`${output}.tmp`, output);
} catch (err) {
  console.error(
    `@cubicle/unix-peer: building the addon with ${compiler} failed (${err.message}); ` +
      'install a C compiler (Debian: apt-get install gcc libc6-dev)',
  );
  process.exit(1);
}
console.log(`@cubicle/unix-peer: built ${output}`);
