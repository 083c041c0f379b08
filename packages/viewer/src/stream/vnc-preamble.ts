import { createHash, createHmac } from 'node:crypto';
import { VNC_PREAMBLE_CONTEXT, VNC_PREAMBLE_PREFIX } from '@cubicle/contract/guest';
import { open, type Keyring } from '@cubicle/control-plane';
import type { Db } from '@cubicle/db';

/**
 * vncPreambleOf is the line the bridge sends first on a sandbox's VNC port, proving it holds the
 * guest token without sending it (format: @cubicle/contract/guest `VNC_PREAMBLE_PREFIX`; the
 * guest's check: driver-guest `viewerPreambleOf`, which a shared test vector keeps equal).
 */
export function vncPreambleOf(guestToken: string): Buffer {
  const key = createHash('sha256').update(guestToken).digest();
  const mac = createHmac('sha256', key).update(VNC_PREAMBLE_CONTEXT).digest('hex');
  return Buffer.from(`${VNC_PREAMBLE_PREFIX}${mac}\n`, 'latin1');
}

/**
 * vncPreambleForSandbox opens the sandbox's sealed guest token (sealed with the sandbox id as
 * associated data) and derives its preamble; null when the sandbox has no token, such as a test
 * double standing where a desktop would be.
 */
export async function vncPreambleForSandbox(
  db: Db,
  keyring: Keyring,
  sandboxId: string,
): Promise<Buffer | null> {
  const row = await db.sandbox.findUnique({
    where: { id: sandboxId },
    select: { guestTokenCiphertext: true },
  });
  if (!row?.guestTokenCiphertext) return null;
  return vncPreambleOf(open(keyring, row.guestTokenCiphertext, sandboxId));
}
