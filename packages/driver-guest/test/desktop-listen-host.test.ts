// startDesktop({ listenHost }): the guest driver and x11vnc listen on one given local address (a
// simulated pod's own loopback IP in the Kubernetes test cluster), not on 127.0.0.1.
import { randomInt } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { rfbBanner } from './helpers/rfb-banner.js';
import { startDesktop } from '../src/desktop/start-desktop.js';
import { viewerPreambleOfToken } from '../src/vnc/viewer-preamble.js';

/** accepts resolves whether host:port accepts a TCP connection. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('startDesktop listenHost', () => {
  it('serves the driver (child daemon) and VNC on the given address only', async () => {
    const host = `127.${randomInt(100, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    const session = await startDesktop({ daemon: 'child', listenHost: host });
    try {
      expect(session.vncHost).toBe(host);
      expect(session.guestUrl).toMatch(new RegExp(`^http://${host.replaceAll('.', '\\.')}:\\d+$`));
      // The daemon probes the launcher's x11vnc on that address too, so health reports its port.
      const health = await fetch(`${session.guestUrl}/healthz`);
      expect(await health.json()).toMatchObject({ vnc_port: session.vncPort });
      expect(
        await rfbBanner(session.vncPort, host, viewerPreambleOfToken(session.guestToken)),
      ).toMatch(/^RFB 003\.00\d/);
      const guestPort = Number(new URL(session.guestUrl ?? '').port);
      expect(await accepts('127.0.0.1', session.vncPort)).toBe(false);
      expect(await accepts('127.0.0.1', guestPort)).toBe(false);
    } finally {
      await session.stop();
    }
  });
});
