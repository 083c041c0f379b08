// The check every cached Go tool makes before use: does the binary exist and report the pinned
// version? Running a tool to ask costs 0.1–0.3 s on a busy machine, so a binary that passed once
// gets a stamp beside it (its size and mtime) and is trusted while it matches.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';

const stampOf = (bin) => `${bin}.verified`;
const fingerprint = (bin, version) => {
  const { size, mtimeMs } = statSync(bin);
  return JSON.stringify({ version, size, mtimeMs });
};

/**
 * isStampedTool: `bin` exists and either carries a stamp for `version` or runs `args` and its
 * output passes `reports(stdout)` (then it is stamped). `env` is the environment of that run.
 */
export function isStampedTool(bin, { version, args, reports, env = process.env }) {
  if (!existsSync(bin)) return false;
  try {
    if (readFileSync(stampOf(bin), 'utf8') === fingerprint(bin, version)) return true;
  } catch {
    // no stamp yet: run it
  }
  const result = spawnSync(bin, args, { encoding: 'utf8', timeout: 20_000, env });
  const isReady = result.status === 0 && reports(result.stdout);
  if (isReady) writeFileSync(stampOf(bin), fingerprint(bin, version));
  return isReady;
}

/** dropStamp removes a stamp (a partial build checked under its temporary name). */
export function dropStamp(bin) {
  rmSync(stampOf(bin), { force: true });
}
