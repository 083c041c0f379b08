// The Go toolchain behind kube-tools.mjs: the machine's `go` when it is new enough, else Go's own
// toolchain switch (GOTOOLCHAIN) from an older go, else the toolchain module downloaded from the
// module proxy, checked against the checksum database and unpacked into the tools cache.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GO_TOOLCHAIN } from './kube-paths.mjs';
import { extractZip, moduleZipHash, zipEntries } from './kube-zip.mjs';
import { capture } from './run.mjs';
import { dim, formatMs, say, UserError } from './ui.mjs';

const HEARTBEAT_MS = 15_000;

/** parseGoVersion turns "go1.26.8" (or "go1.26") into [1, 26, 8]; undefined for anything else. */
export function parseGoVersion(text) {
  const match = /go(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : undefined;
}

/** isAtLeast compares two [major, minor, patch] triples. */
export function isAtLeast(version, minimum) {
  for (let i = 0; i < 3; i += 1) {
    if (version[i] !== minimum[i]) return version[i] > minimum[i];
  }
  return true;
}

/** goProxyUrl is the first real proxy of GOPROXY (entries split on ',' or '|'), else proxy.golang.org. */
export function goProxyUrl(env = process.env) {
  const entries = (env.GOPROXY ?? '').split(/[,|]/).map((entry) => entry.trim());
  const proxy = entries.find((entry) => entry !== '' && entry !== 'direct' && entry !== 'off');
  return (proxy ?? 'https://proxy.golang.org').replace(/\/+$/, '');
}

async function goVersionOf(goBin, env) {
  const { code, stdout } = await capture(goBin, ['env', 'GOVERSION'], { env });
  return code === 0 ? parseGoVersion(stdout) : undefined;
}

/**
 * downloadGoToolchain fetches golang.org/toolchain@<version> from the module proxy, checks its
 * h1 hash against the checksum database (through the same proxy), and unpacks it into `dest`.
 * Returns the path of its `go` binary.
 */
export async function downloadGoToolchain(dest, { env = process.env, log = say } = {}) {
  const proxy = goProxyUrl(env);
  const { module, moduleVersion } = GO_TOOLCHAIN;
  const zipUrl = `${proxy}/${module}/@v/${moduleVersion}.zip`;
  log(dim(`go: downloading ${zipUrl}`));
  const response = await fetch(zipUrl);
  if (!response.ok)
    throw new UserError(`go toolchain download failed: ${response.status} ${zipUrl}`);
  const zip = Buffer.from(await response.arrayBuffer());
  const entries = zipEntries(zip);
  const lookupUrl = `${proxy}/sumdb/sum.golang.org/lookup/${module}@${moduleVersion}`;
  const lookup = await fetch(lookupUrl);
  if (!lookup.ok)
    throw new UserError(`go toolchain checksum lookup failed: ${lookup.status} ${lookupUrl}`);
  const expected = new RegExp(`^${module} ${moduleVersion} (h1:\\S+)$`, 'm').exec(
    await lookup.text(),
  )?.[1];
  const actual = moduleZipHash(entries);
  if (!expected || expected !== actual) {
    throw new UserError(
      `go toolchain checksum mismatch: got ${actual}, checksum database says ${expected ?? 'nothing'}`,
    );
  }
  const staging = `${dest}.partial`;
  rmSync(staging, { recursive: true, force: true });
  extractZip(entries, `${module}@${moduleVersion}/`, staging);
  rmSync(dest, { recursive: true, force: true });
  renameSync(staging, dest);
  log(dim(`go: ${module}@${moduleVersion} (${actual}) unpacked into ${dest}`));
  return join(dest, 'bin', 'go');
}

/**
 * findGo returns `{ go, env }`: a go binary and the extra environment to run it with, new enough
 * for GO_TOOLCHAIN.minimum. Order: PATH / /usr/local/go, the cached downloaded toolchain, an
 * older go told to switch (GOTOOLCHAIN), and finally a fresh download into `toolsDir`.
 */
export async function findGo(toolsDir, { log = say, candidates: given } = {}) {
  const minimum = parseGoVersion(`go${GO_TOOLCHAIN.minimum}`);
  const cached = join(toolsDir, `go-${GO_TOOLCHAIN.version}`, 'bin', 'go');
  // `candidates` replaces the usual places (for trying the fallbacks on a machine that has go).
  const candidates = given ?? ['go', '/usr/local/go/bin/go', cached];
  const local = { ...process.env, GOTOOLCHAIN: 'local' };
  let older;
  for (const go of candidates) {
    const version = await goVersionOf(go, local);
    if (!version) continue;
    if (isAtLeast(version, minimum))
      return { go, env: { GOTOOLCHAIN: 'local' }, version: version.join('.') };
    older ??= go;
  }
  // Go 1.21+ can fetch and run a newer toolchain itself (from GOPROXY into GOMODCACHE).
  const switchTo = { GOTOOLCHAIN: `go${GO_TOOLCHAIN.version}` };
  if (older && isAtLeast((await goVersionOf(older, local)) ?? [0, 0, 0], [1, 21, 0])) {
    const goEnv = goCacheEnv(toolsDir);
    const version = await goVersionOf(older, { ...process.env, ...goEnv, ...switchTo });
    if (version && isAtLeast(version, minimum)) {
      log(dim(`go: ${older} switches to go${version.join('.')} (GOTOOLCHAIN)`));
      return { go: older, env: switchTo, version: version.join('.') };
    }
  }
  log(
    `go ${GO_TOOLCHAIN.minimum}+ not found: installing go ${GO_TOOLCHAIN.version} from the module proxy`,
  );
  const go = await downloadGoToolchain(join(toolsDir, `go-${GO_TOOLCHAIN.version}`), { log });
  const version = await goVersionOf(go, local);
  if (!version) throw new UserError(`the downloaded go toolchain does not run: ${go}`);
  return { go, env: { GOTOOLCHAIN: 'local' }, version: version.join('.') };
}

/** goCacheEnv keeps Go's module download and build caches inside the tools cache, reused across builds. */
export function goCacheEnv(toolsDir) {
  const gopath = join(toolsDir, 'go');
  return {
    GOPATH: gopath,
    GOMODCACHE: join(gopath, 'pkg', 'mod'),
    GOCACHE: join(gopath, 'cache'),
    // -modcacherw: the module cache stays deletable with rm -rf.
    GOFLAGS: '-buildvcs=false -modcacherw',
  };
}

function tail(file, lines) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * runGo runs one go command with its output appended to `logFile`, printing an elapsed-time line
 * every 15 s so whoever waits sees it is alive. A failure throws with the log's last lines.
 */
export function runGo(goBin, args, { cwd, env, logFile, label, log = say }) {
  mkdirSync(cwd, { recursive: true });
  const out = openSync(logFile, 'a');
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(goBin, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    const heartbeat = setInterval(
      () => log(dim(`  … ${label}: ${formatMs(performance.now() - started)} (log: ${logFile})`)),
      HEARTBEAT_MS,
    );
    child.once('error', (error) => {
      clearInterval(heartbeat);
      reject(new UserError(`could not run ${goBin}: ${error.message}`));
    });
    child.once('exit', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) return resolve(performance.now() - started);
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      reject(
        new UserError(
          `${label}: \`go ${args.join(' ')}\` ${how}; last lines of ${logFile}:\n${tail(logFile, 30)}`,
        ),
      );
    });
  });
}
