/* eslint-disable @typescript-eslint/no-explicit-any -- guest answers are read loosely here; the daemon validates them against the contract. */
// Issue 32 on real sandboxed desktops (the local backend's kind, started through startDesktop
// as the backend does): a desktop whose policy is `none` keeps today's loopback-only namespace;
// one with a policy runs in the network namespace the egress point made, names the egress
// resolver in its /etc/resolv.conf, reaches exactly what its policy allows with processes that
// know nothing of proxies (curl without proxy variables, Python sockets), cannot change its own
// network, and Chromium opens an allowed page and gets its error page for a denied one. All of
// it on the test's fake internet: no packet leaves this machine.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { EffectiveEgressPolicy, EgressPolicy } from '@cubicle/contract/api';
import { startDesktop, type DesktopSession } from '@cubicle/driver-guest';
import { effectivePolicy, EgressPoint, type EgressDenialBatchItem } from '@cubicle/egress';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_DNS,
  FAKE_RANGES,
  makeTestCa,
  startFakeInternet,
  type FakeInternet,
} from '../support/fake-internet/fake-internet.js';

const policyOf = (pool: EgressPolicy): EffectiveEgressPolicy =>
  effectivePolicy('none', { allow: [] }, pool, null);
const ALLOWLIST = policyOf({
  mode: 'allowlist',
  allow: ['allowed.example.test', '*.wild.example.test:443', 'api.example.test:443'],
  deny: [],
});
/** A credential bound to api.example.test: its value must reach the server and never the sandbox. */
const SECRET = `Bearer cub-${randomBytes(12).toString('hex')}`;

/** guest calls the sandbox's daemon over its unix socket, as the worker does. */
function guest(session: DesktopSession, path: string, body: unknown | null): Promise<any> {
  const socketPath = decodeURIComponent(session.guestUrl!.slice('http+unix://'.length));
  const payload = body === null ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: `/v1${path}`,
        method: body === null ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${session.guestToken}`,
          ...(body === null
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode, ...JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** sh runs a command in the desktop; stdin carries the test CA when asked. */
const sh = async (session: DesktopSession, command: string, stdin?: string) => {
  const ran = await guest(session, '/shell/run', {
    command,
    timeout_ms: 30_000,
    ...(stdin ? { stdin } : {}),
  });
  return { code: ran.exit_code as number | null, out: String(ran.stdout ?? '').trim() };
};

/** The sandbox's network interfaces (it has no /sys). */
const INTERFACES = 'awk -F: \'NR > 2 { gsub(/ /, "", $1); print $1 }\' /proc/net/dev';

/** A raw TCP connection from Python: 'open' (echoed), 'refused' or the error's kind. */
const PY_CONNECT = (host: string, port: number) =>
  `/usr/bin/python3 -c "
import socket
try:
    s = socket.create_connection(('${host}', ${port}), timeout=3)
    s.sendall(b'ping'); s.settimeout(3)
    print('open' if s.recv(8) else 'closed')
except ConnectionResetError: print('refused')
except ConnectionRefusedError: print('refused')
except OSError as e: print(type(e).__name__, e.errno)
"`;

describe('local sandboxes and their egress', () => {
  let internet: FakeInternet;
  let point: EgressPoint;
  let linked: DesktopSession;
  let isolated: DesktopSession;
  const tag = randomBytes(4).toString('hex');
  const linkedId = `egresse2e-${tag}-a`;
  const denials: EgressDenialBatchItem[] = [];
  const deniedOf = async (match: Partial<EgressDenialBatchItem>) => {
    await point.flushReports();
    return denials.filter(
      (d) =>
        d.verdict !== 'allowed' &&
        Object.entries(match).every(([k, v]) => d[k as keyof typeof d] === v),
    );
  };
  let hostAddress = '';

  beforeAll(async () => {
    internet = await startFakeInternet();
    point = await EgressPoint.start({
      upstreamDns: [FAKE_DNS],
      upstreamGuard: FAKE_RANGES,
      report: (batch) => void denials.push(...batch),
      reportEveryMs: 20,
      credentials: {
        ca: makeTestCa('Cubicle egress test installation CA'),
        upstreamCa: internet.caPem,
      },
    });
    const linkStarted = performance.now();
    const network = await point.attach(linkedId, ALLOWLIST, {
      injections: [{ hosts: ['api.example.test'], header: 'Authorization', value: SECRET }],
    });
    console.log(`[egress] link made in ${Math.round(performance.now() - linkStarted)} ms`);
    hostAddress = network.hostAddress;
    [linked, isolated] = await Promise.all([
      startDesktop({ id: linkedId, daemon: 'sandbox', network }),
      startDesktop({ id: `egresse2e-${tag}-b`, daemon: 'sandbox' }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([linked?.stop(), isolated?.stop()]);
    await point?.detach(linkedId);
    await point?.close();
    await internet?.stop();
  });

  it('none: a desktop without a link has loopback only, as before', async () => {
    expect((await sh(isolated, INTERFACES)).out.split(/\s+/)).toEqual(['lo']);
    expect(await sh(isolated, PY_CONNECT('198.51.100.10', 80))).toMatchObject({
      out: 'OSError 101', // ENETUNREACH
    });
    expect((await sh(isolated, 'curl -sS -m 3 http://198.51.100.10/')).code).not.toBe(0);
  });

  it('a linked desktop names the egress resolver and cannot change its network', async () => {
    expect((await sh(linked, INTERFACES)).out.split(/\s+/).sort()).toEqual(['eth0', 'lo']);
    expect((await sh(linked, 'cat /etc/resolv.conf')).out).toContain(`nameserver ${hostAddress}`);
    expect((await sh(linked, 'env | grep -ci proxy')).out).toBe('0');
    const down = await sh(linked, '/usr/sbin/ip link set eth0 down 2>&1; echo rc=$?');
    expect(down.out).toMatch(/Operation not permitted[\s\S]*rc=2/);
    const route = await sh(
      linked,
      '/usr/sbin/ip route add 198.51.100.0/24 dev eth0 2>&1; echo rc=$?',
    );
    expect(route.out).toMatch(/rc=2/);
  });

  it('allowlist: curl and raw sockets reach exactly what the policy allows', async () => {
    const curl = (url: string) =>
      sh(linked, `cat > /tmp/ca.pem && curl -sS -m 5 --cacert /tmp/ca.pem ${url}`, internet.caPem);
    expect(JSON.parse((await curl('https://allowed.example.test/')).out)).toMatchObject({
      host: 'allowed.example.test',
    });
    expect(JSON.parse((await curl('https://www.wild.example.test/')).out).scheme).toBe('https');
    expect((await curl('https://denied.example.test/')).code).toBe(6); // could not resolve
    expect(await deniedOf({ protocol: 'dns', name: 'denied.example.test' })).toEqual([
      expect.objectContaining({ rule: 'default:allowlist', desktopId: linkedId }),
    ]);
    // A process that ignores DNS and proxies alike: a raw socket to an address.
    expect((await sh(linked, PY_CONNECT('203.0.113.20', 7))).out).toBe('refused');
    expect(await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 7 })).toEqual([
      expect.objectContaining({ rule: 'default:allowlist' }),
    ]);
  });

  it('a credential bound to a host is added at egress and never enters the sandbox', async () => {
    // The sandbox's own trust store (no --cacert) accepts the installation CA for the bound host.
    const bound = await sh(linked, 'curl -sS -m 10 -v https://api.example.test/echo-headers 2>&1');
    expect(bound.code).toBe(0);
    expect(bound.out).toContain('"header_names"');
    expect(bound.out).toContain('"authorization"');
    expect(bound.out).toContain('issuer: CN=Cubicle egress test installation CA');
    const seen = internet.seen.filter((r) => r.path === '/echo-headers');
    expect(seen.at(-1)?.headers.authorization).toBe(SECRET);
    // Nowhere in the sandbox: what curl saw (verbose: every header both ways), its environment,
    // its files, and every process's environment and command line.
    const secretPart = SECRET.split(' ')[1]!;
    expect(bound.out).not.toContain(secretPart);
    // The search names only the secret's shape, so that asking puts no copy inside; a decoy of
    // that shape in a file shows it would find one.
    const decoy = `cub-${'0'.repeat(24)}`;
    await sh(linked, `echo ${decoy} > /tmp/decoy`);
    const search = await sh(
      linked,
      `{ env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run/cubicle; } 2>/dev/null | grep -ao 'cub-[0-9a-f]\\{24\\}' | sort -u`,
    );
    expect(search.out.split('\n')).toContain(decoy);
    expect(search.out.split('\n')).not.toContain(secretPart);
    // Any other host is passed through untouched: its own certificate, not one of Cubicle's.
    const untouched = await sh(linked, 'curl -sS -m 10 https://allowed.example.test/ 2>&1');
    expect(untouched.code).toBe(60); // the sandbox does not trust the fake internet's own CA
    const withItsCa = await sh(
      linked,
      'cat > /tmp/ca.pem && curl -sS -m 10 -v --cacert /tmp/ca.pem https://allowed.example.test/ 2>&1',
      internet.caPem,
    );
    expect(withItsCa.out).toContain('issuer: CN=Cubicle fake internet test CA');
    expect(internet.seen.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('a new policy reaches the running desktop within a second', async () => {
    point.setPolicy(
      linkedId,
      policyOf({ mode: 'allowlist', allow: ['203.0.113.20/32:7'], deny: [] }),
    );
    const started = performance.now();
    expect((await sh(linked, PY_CONNECT('203.0.113.20', 7))).out).toBe('open');
    expect(performance.now() - started).toBeLessThan(1000);
    point.setPolicy(linkedId, ALLOWLIST);
    expect((await sh(linked, PY_CONNECT('203.0.113.20', 7))).out).toBe('refused');
  });

  it('Chromium opens an allowed page and shows its error page for a denied one', async () => {
    const open = async (url: string) => {
      const launched = await guest(linked, '/windows/launch', {
        app: 'browser',
        url,
        wait_for_window_ms: 90_000,
      });
      expect(launched.window_wait).toBe('found');
      const windowId = launched.window.window_id as number;
      // The title follows the page once it has loaded (or failed).
      let title = '';
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const windows = await guest(linked, '/windows', null);
        title = (windows.windows ?? []).find((w: any) => w.window_id === windowId)?.title ?? '';
        if (title && !/^(about:blank|New Tab|Untitled)/.test(title)) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      // The title changes before the page is painted: give it a moment, then the whole display.
      await new Promise((r) => setTimeout(r, 2000));
      const shot = await guest(linked, '/screenshot', {});
      if (shot.data)
        writeFileSync(
          `/tmp/egress-e2e-${new URL(url).hostname}.png`,
          Buffer.from(shot.data, 'base64'),
        );
      // Gone before the next launch, or that one hands its URL to this instance and exits.
      await sh(
        linked,
        `kill ${launched.pid}; while kill -0 ${launched.pid} 2>/dev/null; do sleep 0.1; done`,
      );
      return title;
    };
    expect(await open('http://allowed.example.test/page')).toBe(
      'allowed.example.test/page - Chromium',
    );
    // The denied page is Chromium's own error page (screenshot kept in /tmp), titled by the host.
    expect(await open('http://denied.example.test/page')).toBe('denied.example.test - Chromium');
    const headless = await sh(
      linked,
      'chromium --no-sandbox --headless=new --disable-gpu --dump-dom http://denied.example.test/ 2>&1 | grep -o "net::ERR_[A-Z_]*"',
    );
    expect(headless.out).toBe('net::ERR_NAME_NOT_RESOLVED');
    expect(await deniedOf({ protocol: 'dns', name: 'denied.example.test' })).not.toHaveLength(0);
  });
});
