import { abortReason, sleep } from './backoff.js';
import { GUEST_PORT, VNC_PORT } from './names.js';

/** hostPort formats an address for a URL or endpoint (IPv6 in brackets). */
export const hostPort = (ip: string, port: number) =>
  ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

export const guestUrlOf = (ip: string) => `http://${hostPort(ip, GUEST_PORT)}`;
export const vncEndpointOf = (ip: string) => hostPort(ip, VNC_PORT);

/**
 * waitForGuestHealthy polls the guest's /healthz until it answers 200 with status `ok` (display
 * and accessibility bus up, not merely the process listening). Each probe has its own timeout;
 * the whole wait ends only with the caller's signal (the provisioning deadline).
 */
export async function waitForGuestHealthy(
  guestUrl: string,
  token: string,
  signal: AbortSignal,
  intervalMs = 250,
): Promise<void> {
  let last = 'no answer yet';
  for (;;) {
    if (signal.aborted)
      throw new Error(`guest ${guestUrl} not healthy (${last}): ${abortReason(signal).message}`);
    try {
      const res = await fetch(`${guestUrl}/healthz`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.any([signal, AbortSignal.timeout(3000)]),
      });
      const body = (await res.json().catch(() => null)) as { status?: string } | null;
      if (res.ok && body?.status === 'ok') return;
      last = `HTTP ${res.status} ${body?.status ?? ''}`.trim();
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(intervalMs, signal).catch(() => undefined);
  }
}
