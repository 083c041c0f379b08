import { ViewerCloseCodes, ViewerTicketCreated } from '@cubicle/contract/api';
import { releaseClaim } from '@cubicle/control-plane';
import { vncPreambleOf } from '@cubicle/viewer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  recordingVnc,
  viewerFixture,
  type RecordingVnc,
  type ViewerFixture,
} from './viewer-fixture.js';
import { openStream, waitFor } from './viewer-ws.js';

// Client→server RFB as a hostile viewer sends it.
const HANDSHAKE = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 0])]);
const FBUR = Buffer.from([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);
const KEY = Buffer.from([4, 1, 0, 0, 0, 0, 0xff, 0x0d]);
const CLICK = Buffer.from([5, 1, 0, 100, 0, 100]);
const CUT = Buffer.concat([Buffer.from([6, 0, 0, 0, 0, 0, 0, 4]), Buffer.from('evil')]);
const forwarded = (vnc: RecordingVnc, i: number) => Buffer.concat(vnc.received[i] ?? []);

/**
 * The stream proxy between a WebSocket viewer and a VNC server: what reaches the server in view
 * and control mode, and every way a stream is made to close (revocation on another replica,
 * the claim's end by the API or by the worker's reclaim, expiry, limits, the re-check).
 */
describe('viewer stream proxy', () => {
  let f: ViewerFixture;
  let vnc: RecordingVnc;
  let claimId: string;
  const mint = async (mode: 'view' | 'control', ttl_seconds = 600, id = claimId) => {
    const res = await f.apps[0].inject({
      method: 'POST',
      url: `/v1/claims/${id}/viewer-tickets`,
      headers: { authorization: f.a.member },
      payload: { mode, ttl_seconds },
    });
    expect(res.statusCode, res.body).toBe(201);
    return ViewerTicketCreated.parse(res.json());
  };

  beforeAll(async () => {
    f = await viewerFixture();
    vnc = await recordingVnc();
    claimId = await f.claim(vnc.endpoint);
  });
  afterAll(async () => {
    await f?.close();
    await vnc?.close();
  });

  it('view mode: the server gets the handshake (shared forced on) and pixel requests, no input', async () => {
    const t = await mint('view');
    const conn = vnc.received.length;
    const s = await openStream(f.urls[1], t.ticket);
    await waitFor(() => s.received().toString() === 'RFB 003.008\n');
    s.ws.send(HANDSHAKE);
    for (const chunk of [KEY, CLICK, CUT, FBUR, CLICK.subarray(0, 3), CLICK.subarray(3), KEY])
      s.ws.send(chunk);
    s.ws.send(FBUR);
    const expected = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 1]), FBUR, FBUR]);
    await waitFor(() => forwarded(vnc, conn).length >= expected.length);
    // Give any input that slipped through time to arrive before comparing.
    s.ws.send(FBUR);
    await waitFor(() => forwarded(vnc, conn).length >= expected.length + FBUR.length);
    expect(forwarded(vnc, conn)).toEqual(Buffer.concat([expected, FBUR]));
    // Server → viewer passes untouched.
    vnc.broadcast(Buffer.from([0, 0, 0, 0]));
    await waitFor(() => s.received().length === 16);
    s.ws.close();
  });

  it('control mode forwards every byte as sent', async () => {
    const t = await mint('control');
    const conn = vnc.received.length;
    const s = await openStream(f.urls[1], t.ticket);
    const sent = Buffer.concat([HANDSHAKE, KEY, CLICK, CUT, FBUR]);
    s.ws.send(sent);
    await waitFor(() => forwarded(vnc, conn).length >= sent.length);
    expect(forwarded(vnc, conn)).toEqual(sent);
    s.ws.close();
  });

  it("the proxy first proves the sandbox's guest token to the desktop (a MAC of it, never the token)", async () => {
    const token = 'g'.repeat(64);
    const desktop = await recordingVnc();
    try {
      const id = await f.claim(desktop.endpoint, token);
      const t = await mint('control', 600, id);
      const s = await openStream(f.urls[0], t.ticket);
      s.ws.send(HANDSHAKE);
      const preamble = vncPreambleOf(token);
      await waitFor(() => forwarded(desktop, 0).length >= preamble.length + HANDSHAKE.length);
      expect(forwarded(desktop, 0)).toEqual(Buffer.concat([preamble, HANDSHAKE]));
      expect(forwarded(desktop, 0).toString('latin1')).not.toContain(token);
      expect(preamble.toString('latin1')).toMatch(/^CUBICLE-VNC\/1 [0-9a-f]{64}\n$/);
      s.ws.close();
    } finally {
      await desktop.close();
    }
  });

  it('a message a viewer may not send closes the stream with 4400 and the desktop connection', async () => {
    const t = await mint('view');
    const conn = vnc.received.length;
    const s = await openStream(f.urls[1], t.ticket);
    s.ws.send(Buffer.concat([HANDSHAKE, Buffer.from([251, 0, 5, 0, 3, 0, 1, 0])]));
    expect((await s.closed).code).toBe(ViewerCloseCodes.protocol_violation);
    expect(forwarded(vnc, conn).subarray(12)).toEqual(Buffer.alloc(0));
  });

  it('revoking on one replica closes the stream on another (pub/sub)', async () => {
    const t = await mint('view');
    const s = await openStream(f.urls[1], t.ticket);
    const start = Date.now();
    const del = await f.apps[0].inject({
      method: 'DELETE',
      url: `/v1/viewer-tickets/${t.id}`,
      headers: { authorization: f.a.admin },
    });
    expect(del.statusCode).toBe(204);
    const closed = await s.closed;
    expect(closed.code).toBe(ViewerCloseCodes.revoked);
    console.log(`[viewer] revoke → close on another replica: ${closed.at - start} ms`);
  });

  it("the claim's end closes its streams: released through the API, or reclaimed by the worker", async () => {
    for (const how of ['api', 'worker'] as const) {
      const claim = await f.claim(vnc.endpoint);
      const view = await openStream(f.urls[1], (await mint('view', 600, claim)).ticket);
      const control = await openStream(f.urls[1], (await mint('control', 600, claim)).ticket);
      const start = Date.now();
      if (how === 'api') {
        const res = await f.apps[0].inject({
          method: 'DELETE',
          url: `/v1/claims/${claim}`,
          headers: { authorization: f.a.admin },
        });
        expect(res.statusCode).toBe(200);
      } else {
        await releaseClaim(f.workerDeps, f.a.tenantId, claim, 'ttl_expired');
      }
      for (const s of [view, control]) {
        const closed = await s.closed;
        expect(closed.code, how).toBe(ViewerCloseCodes.ended);
        console.log(`[viewer] claim end (${how}) → close: ${closed.at - start} ms`);
      }
    }
  });

  it('a stream closes when its ticket expires', async () => {
    const t = await mint('view', 2);
    const s = await openStream(f.urls[1], t.ticket);
    const closed = await s.closed;
    expect(closed.code).toBe(ViewerCloseCodes.expired);
    console.log(
      `[viewer] expiry → close: ${closed.at - Date.parse(t.expires_at)} ms after expires_at`,
    );
  });

  it('the periodic re-check closes a stream whose revocation message was lost', async () => {
    const t = await mint('view');
    const s = await openStream(f.urls[0], t.ticket);
    // Revoked in the database only: no pub/sub message is sent.
    await f.db.viewerTicket.update({ where: { id: t.id }, data: { revokedAt: new Date() } });
    expect((await s.closed).code).toBe(ViewerCloseCodes.revoked);
  });

  it('limits viewers per ticket and per tenant (4029), and frees a slot when one leaves', async () => {
    const t = await mint('view');
    const first = await openStream(f.urls[1], t.ticket);
    const second = await openStream(f.urls[1], t.ticket);
    const third = await openStream(f.urls[1], t.ticket);
    expect((await third.closed).code).toBe(ViewerCloseCodes.limit);
    const other = await openStream(f.urls[1], (await mint('view')).ticket);
    const overTenant = await openStream(f.urls[1], (await mint('view')).ticket);
    const closed = await overTenant.closed;
    expect([closed.code, closed.reason]).toEqual([ViewerCloseCodes.limit, 'too many viewers']);
    first.ws.close();
    await first.closed;
    await waitFor(async () => {
      const again = await openStream(f.urls[1], t.ticket);
      const isOpen = await Promise.race([
        again.closed.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(true), 200)),
      ]);
      if (isOpen) again.ws.close();
      return isOpen;
    });
    for (const s of [second, other]) s.ws.close();
  });

  it('a slow viewer makes the proxy stop reading the desktop instead of buffering without bound', async () => {
    const t = await mint('view');
    const conn = vnc.received.length;
    const s = await openStream(f.urls[1], t.ticket);
    await waitFor(() => vnc.received.length > conn);
    s.ws.pause(); // the viewer stops reading
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const server = vnc.sockets()[vnc.sockets().length - 1]!;
    for (let sent = 0; sent < total; sent += chunk.length) server.write(chunk);
    // The desktop side keeps what the proxy refused to read: most of it.
    await waitFor(() => server.writableLength > 32 * 1024 * 1024);
    await new Promise((r) => setTimeout(r, 300));
    expect(server.writableLength).toBeGreaterThan(32 * 1024 * 1024);
    s.ws.resume(); // and once the viewer reads again, everything arrives
    await waitFor(() => s.received().length === 12 + total, 60_000);
    s.ws.close();
  });

  it('a desktop that stops reading makes the proxy stop reading the viewer (control mode)', async () => {
    const t = await mint('control');
    const conn = vnc.received.length;
    const s = await openStream(f.urls[1], t.ticket);
    await waitFor(() => vnc.received.length > conn);
    const server = vnc.sockets()[vnc.sockets().length - 1]!;
    server.pause(); // the desktop stops reading
    const frame = Buffer.alloc(512 * 1024, 3);
    const frames = 128; // 64 MiB
    for (let i = 0; i < frames; i++) s.ws.send(frame);
    // What the proxy refused to read stays queued in the viewer's own client.
    await new Promise((r) => setTimeout(r, 500));
    expect(s.ws.bufferedAmount).toBeGreaterThan(32 * 1024 * 1024);
    server.resume();
    await waitFor(() => forwarded(vnc, conn).length === frames * frame.length, 60_000);
    s.ws.close();
  });
});
