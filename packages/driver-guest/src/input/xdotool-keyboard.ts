import { execFile } from 'node:child_process';

interface XdotoolOutcome {
  ok: boolean;
  stderr: string;
}

function xdotool(args: string[], env: Record<string, string | undefined>): Promise<XdotoolOutcome> {
  return new Promise((resolve) => {
    execFile('xdotool', args, { env, timeout: 30_000 }, (err, _stdout, stderr) =>
      resolve({ ok: !err, stderr: String(stderr) }),
    );
  });
}

/**
 * pressKeys sends a key combo (`ctrl+s`, `Return`) `repeat` times. xdotool exits 0 even for a
 * keysym name it does not know and sends nothing for it, so that message means "not delivered".
 */
export async function pressKeys(
  combo: string,
  repeat: number,
  env: Record<string, string | undefined>,
): Promise<{ ok: boolean; unknownKey: boolean; error?: string }> {
  const out = await xdotool(['key', '--delay', '12', '--repeat', String(repeat), '--', combo], env);
  const unknownKey = /No such key name|Invalid key sequence/i.test(out.stderr);
  return { ok: out.ok && !unknownKey, unknownKey, ...(out.ok ? {} : { error: out.stderr.trim() }) };
}
