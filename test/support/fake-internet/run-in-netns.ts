import { execFile } from 'node:child_process';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * runInNetns runs a command in a network namespace file (`nsenter --net=`), asynchronously: the
 * egress point under test usually lives in the calling process and must keep serving meanwhile.
 * The environment is empty but PATH: no proxy variables, so nothing honours a proxy.
 */
export function runInNetns(netnsPath: string, argv: string[], timeoutMs = 15_000): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      'nsenter',
      [`--net=${netnsPath}`, ...argv],
      { env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }, timeout: timeoutMs, maxBuffer: 8 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err ? (typeof err.code === 'number' ? err.code : -1) : 0,
          stdout: stdout.toString(),
          stderr: stderr.toString(),
        }),
    );
  });
}
