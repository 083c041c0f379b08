// Issue 32: the local egress point's data path on a fake internet. A network namespace made by
// the egress point (as for a sandbox) reaches the test's fake internet only as its policy says:
// names through the egress resolver (rebinding refused), HTTPS by SNI, HTTP by Host, other TCP
// by address and port, UDP refused; every refusal reported in a batch; a new policy applies to
// open and new connections at once. Processes run with no proxy variables (plain curl, Python
// sockets): the kernel sends them all through the point. No packet leaves this machine: the fake
// internet's routes are checked before use and the point's upstream guard admits only its ranges.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import type { EffectiveEgressPolicy, EgressPolicy } from '@cubicle/contract/api';
import {
  effectivePolicy,
  EgressPoint,
  makeInjectionCa,
  type EgressDenialBatchItem,
} from '@cubicle/egress';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
  type FakeInternet,
} from '../support/fake-internet/fake-internet.js';
import { runInNetns } from '../support/fake-internet/run-in-netns.js';
import { ensureEgressRelay } from '../../scripts/tools/egress-relay/tool.mjs';

const policyOf = (pool: EgressPolicy): EffectiveEgressPolicy =>
  effectivePolicy('none', { allow: [] }, pool, null);
const NONE = policyOf({ mode: 'none', allow: [], deny: [] });
const OPEN = policyOf({ mode: 'open', allow: [], deny: ['other.example.test'] });
const ALLOWLIST = policyOf({
  mode: 'allowlist',
  allow: [
    'allowed.example.test',
    '*.wild.example.test:443',
    '203.0.113.21/32:8080',
    'mixed.example.test',
  ],
  deny: [],
});

describe('the local egress point', () => {
  let internet: FakeInternet;
  let point: EgressPoint;
  let netns = '';
  let hostAddress = '';
  let sandboxAddress = '';
  const desktopId = `egresstest-sbx_${randomBytes(4).toString('hex')}`;
  const denials: EgressDenialBatchItem[] = [];
  // A host service listening on every address, as the control plane or Postgres might.
  let hostService: Server;
  let hostPort = 0;
  /** The installation CA's certificate (credentials injected at egress), as a file for curl. */
  let injectCaPath = '';
  const scratchDir = mkdtempSync(join(tmpdir(), 'cubicle-egress-point-'));

  const curl = (...args: string[]) =>
    runInNetns(netns, ['curl', '-sS', '-m', '5', '--cacert', internet.caPath, ...args]);
  const resolve = async (name: string) =>
    (await runInNetns(netns, ['getent', 'ahostsv4', name])).stdout
      .split('\n')[0]
      ?.split(/\s+/)[0] ?? '';
  /** connect opens a raw TCP connection from Python (no proxy settings involved). */
  const connect = async (host: string, port: number) =>
    (
      await runInNetns(netns, [
        '/usr/bin/python3',
        '-c',
        `import socket\ns=socket.create_connection((${JSON.stringify(host)}, ${port}), timeout=3)\n` +
          `s.sendall(b'ping\\n')\ns.settimeout(3)\nd=s.recv(64)\nprint('open' if d else 'closed')`,
      ])
    ).stdout.trim() || 'refused';
  const deniedOf = async (match: Partial<EgressDenialBatchItem>) => {
    await point.flushReports();
    return denials.filter(
      (d) =>
        d.verdict !== 'allowed' &&
        Object.entries(match).every(([k, v]) => d[k as keyof typeof d] === v),
    );
  };

  beforeAll(async () => {
    internet = await startFakeInternet();
    const ca = await makeInjectionCa('Cubicle egress point test CA');
    injectCaPath = join(scratchDir, 'inject-ca.pem');
    writeFileSync(injectCaPath, ca.certPem);
    point = await EgressPoint.start({
      upstreamDns: [FAKE_DNS],
      upstreamGuard: FAKE_RANGES,
      // As the worker runs it: the relay accepts the link's connections and splices them.
      relay: await ensureEgressRelay({ log: () => undefined, link: false }),
      report: (batch) => void denials.push(...batch),
      reportEveryMs: 20,
      credentials: { ca, upstreamCa: internet.caPem },
    });
    const network = await point.attach(desktopId, ALLOWLIST);
    netns = network.netnsPath;
    hostAddress = network.hostAddress;
    sandboxAddress = network.sandboxAddress;
    hostService = createServer((s) => s.end('host secret\n'));
    await new Promise<void>((r) => hostService.listen(0, '0.0.0.0', r));
    hostPort = (hostService.address() as { port: number }).port;
  });

  afterAll(async () => {
    await point?.detach(desktopId);
    await point?.close();
    await internet?.stop();
    hostService?.close();
    rmSync(scratchDir, { recursive: true, force: true });
  });

  it('allowlist: reaches exactly its names, wildcards, blocks and ports', async () => {
    point.setPolicy(desktopId, ALLOWLIST);
    expect(JSON.parse((await curl('https://allowed.example.test/')).stdout)).toMatchObject({
      scheme: 'https',
      host: 'allowed.example.test',
    });
    expect(JSON.parse((await curl('http://allowed.example.test/')).stdout).scheme).toBe('http');
    expect(JSON.parse((await curl('https://a.wild.example.test/')).stdout).host).toBe(
      'a.wild.example.test',
    );
    // The wildcard's port is 443 only; its rule does not cover the name itself.
    expect(
      (await curl('-o', '/dev/null', '-w', '%{http_code}', 'http://a.wild.example.test/')).stdout,
    ).toBe('403');
    expect(await resolve('wild.example.test')).toBe('');
    // A block with a port: 8080 only.
    expect(JSON.parse((await curl('http://203.0.113.21:8080/')).stdout).address).toBe(
      '203.0.113.21',
    );
    expect(
      (await curl('-o', '/dev/null', '-w', '%{http_code}', 'http://203.0.113.21/')).stdout,
    ).toBe('403');
    // A name outside: no answer, and a report naming the rule.
    expect(await resolve('denied.example.test')).toBe('');
    expect(await deniedOf({ protocol: 'dns', name: 'denied.example.test' })).toEqual([
      expect.objectContaining({ rule: 'default:allowlist', desktopId }),
    ]);
  });

  it('a denial names the process behind it (the sandbox socket owner)', async () => {
    point.setPolicy(desktopId, ALLOWLIST);
    expect(await connect('203.0.113.20', 9)).not.toBe('open');
    const [tcp] = await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 9 });
    expect(tcp?.process).toMatch(/^python3 \(pid \d+\)$/);
    // Names only (an allowlist with address rules lets every name resolve, judged by address).
    point.setPolicy(
      desktopId,
      policyOf({ mode: 'allowlist', allow: ['allowed.example.test'], deny: [] }),
    );
    expect(await resolve('nothing.example.test')).toBe('');
    const [dns] = await deniedOf({ protocol: 'dns', name: 'nothing.example.test' });
    expect(dns?.process).toMatch(/^getent \(pid \d+\)$/);
    point.setPolicy(desktopId, ALLOWLIST);
  });

  it('allowlist: an SNI or Host naming another address, or an address alone, is refused', async () => {
    point.setPolicy(desktopId, ALLOWLIST);
    // SNI of a denied name at an allowed name's address.
    const denied = await curl(
      '--resolve',
      'denied.example.test:443:198.51.100.10',
      'https://denied.example.test/',
    );
    expect(denied.code).not.toBe(0);
    // Domain fronting: an allowed name at someone else's address.
    const fronted = await curl(
      '--resolve',
      'allowed.example.test:443:203.0.113.20',
      'https://allowed.example.test/',
    );
    expect(fronted.code).not.toBe(0);
    expect(await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 443 })).toEqual([
      expect.objectContaining({ name: 'allowed.example.test', rule: 'egress:name-not-at-address' }),
    ]);
    // A raw socket to an address no rule names.
    expect(await connect('203.0.113.20', 7)).toBe('refused');
    expect(await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 7 })).toEqual([
      expect.objectContaining({ rule: 'default:allowlist' }),
    ]);
  });

  it('rebinding: private answers of an allowed name are withheld', async () => {
    point.setPolicy(desktopId, policyOf({ mode: 'open', allow: [], deny: [] }));
    expect(await resolve('rebind.example.test')).toBe('');
    expect(await resolve('loopback.example.test')).toBe('');
    expect(await resolve('metadata.example.test')).toBe('');
    // Of a mixed answer, only the public address is given.
    const mixed = await runInNetns(netns, ['getent', 'ahostsv4', 'mixed.example.test']);
    expect(mixed.stdout).toContain('198.51.100.13');
    expect(mixed.stdout).not.toContain('192.168.1.1');
    expect(await deniedOf({ protocol: 'dns', name: 'rebind.example.test' })).toEqual([
      expect.objectContaining({ ip: '10.0.0.5', rule: 'operator:private-ranges' }),
    ]);
    expect(await deniedOf({ protocol: 'dns', name: 'metadata.example.test' })).toEqual([
      expect.objectContaining({ rule: 'operator:metadata' }),
    ]);
  });

  it('open: reaches the fake internet, never the host, private or metadata ranges', async () => {
    point.setPolicy(desktopId, OPEN);
    expect(JSON.parse((await curl('https://api.example.test/')).stdout).host).toBe(
      'api.example.test',
    );
    expect(await connect('203.0.113.20', 7)).toBe('open');
    // Its deny list still holds.
    const tried: [string, number, string][] = [
      [hostAddress, hostPort, 'operator:private-ranges'], // the host end of the link
      ['192.0.2.2', hostPort, 'operator:host-addresses'], // the host's own address
      ['127.0.0.1', hostPort, ''], // the namespace's own loopback: nothing listens there
      ['10.0.0.5', 80, 'operator:private-ranges'],
      ['172.16.0.1', 443, 'operator:private-ranges'],
      ['192.168.1.1', 80, 'operator:private-ranges'],
      ['100.64.0.1', 80, 'operator:private-ranges'],
      ['169.254.169.254', 80, 'operator:metadata'],
    ];
    for (const [ip, port, rule] of tried) {
      expect(await connect(ip, port), `${ip}:${port}`).toBe('refused');
      if (rule)
        expect(await deniedOf({ ip, port }), `${ip}:${port}`).toEqual([
          expect.objectContaining({ rule }),
        ]);
    }
  });

  it('UDP other than DNS is dropped and reported', async () => {
    point.setPolicy(desktopId, OPEN);
    const sent = await runInNetns(netns, [
      '/usr/bin/python3',
      '-c',
      "import socket\ns=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(1)\ns.sendto(b'x', ('198.51.100.10', 7))\n" +
        "try:\n  s.recv(10); print('answered')\nexcept Exception:\n  print('silent')",
    ]);
    expect(sent.stdout.trim()).toBe('silent');
    await new Promise((r) => setTimeout(r, 600));
    expect(await deniedOf({ protocol: 'udp', ip: '198.51.100.10', port: 7 })).toEqual([
      expect.objectContaining({ rule: 'egress:udp' }),
    ]);
  });

  it('none: nothing is reachable, and a new policy applies to open connections at once', async () => {
    point.setPolicy(desktopId, OPEN);
    // An open connection (the echo service, answering each line), then the policy goes to none:
    // the next line finds the connection cut. Each step waits for the other's file, not a time
    // (a loaded machine can take over a second to start the Python).
    const scratch = mkdtempSync(join(tmpdir(), 'cubicle-egress-cut-'));
    onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
    const [echoed, go] = [join(scratch, 'echoed'), join(scratch, 'go')];
    const session = runInNetns(
      netns,
      [
        '/usr/bin/python3',
        '-c',
        [
          'import os, socket, time',
          "s = socket.create_connection(('203.0.113.20', 7), timeout=3)",
          "s.sendall(b'a'); print(s.recv(8).decode(), flush=True)",
          `open(${JSON.stringify(echoed)}, 'w').close()`,
          `while not os.path.exists(${JSON.stringify(go)}): time.sleep(0.05)`,
          'try:',
          "    s.sendall(b'b'); d = s.recv(8); print('echoed' if d else 'closed')",
          'except Exception:',
          "    print('cut')",
        ].join('\n'),
      ],
      60_000,
    );
    const deadline = Date.now() + 30_000;
    while (!existsSync(echoed) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    point.setPolicy(desktopId, NONE);
    writeFileSync(go, '');
    expect((await session).stdout.split('\n').map((l) => l.trim())).toEqual(['a', 'cut', '']);
    expect(
      await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 7, rule: 'default:none' }),
    ).toHaveLength(1);
    expect(await resolve('allowed.example.test')).toBe('');
    expect(
      (await curl('-o', '/dev/null', '-w', '%{http_code}', 'http://198.51.100.10/')).stdout,
    ).toBe('403');
    expect(await connect('203.0.113.20', 7)).toBe('refused');
    expect(await deniedOf({ protocol: 'dns', name: 'allowed.example.test' })).toEqual([
      expect.objectContaining({ rule: 'default:none' }),
    ]);
  });

  /** listenerOf names the process listening on the link's intercept port (the kernel's view). */
  const listenerOf = () =>
    /users:\(\("([^"]+)"/.exec(
      execFileSync('ss', ['-Htlnp', 'src', `${hostAddress}:15001`], { encoding: 'utf8' }),
    )?.[1];

  it('the relay accepts the link; a long connection is intact both ways and a new policy cuts it', async () => {
    point.setPolicy(desktopId, OPEN);
    expect(point.relayed).toBe(true);
    expect(listenerOf()).toBe('egress-relay');
    const scratch = mkdtempSync(join(tmpdir(), 'cubicle-egress-relay-'));
    onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
    const [echoed, go] = [join(scratch, 'echoed'), join(scratch, 'go')];
    // 4 MB through the echo service (sent and read back at once), compared by hash; then the
    // client names its port in `echoed`, waits for the test's word and tries the connection
    // again. The policy changes only once the whole echo is back: a cut while the bytes flow
    // resets the transfer itself (ConnectionResetError in the client's recv, no 'intact' line).
    // Cutting as soon as `ss` showed the relay holding a socket to the echo service lost that
    // race whenever the rest of the echo outlasted the first look (2 of 3 runs beside another
    // test file, 2026-12-07, before the relay accepted links; more often since it holds a
    // connection from its first bytes).
    const session = runInNetns(
      netns,
      [
        '/usr/bin/python3',
        '-c',
        [
          'import hashlib, os, socket, threading, time',
          "s = socket.create_connection(('203.0.113.20', 7), timeout=20)",
          'data = os.urandom(4 << 20)',
          'threading.Thread(target=lambda: s.sendall(data), daemon=True).start()',
          "got = b''",
          'while len(got) < len(data):',
          '    chunk = s.recv(1 << 16)',
          '    if not chunk: break',
          '    got += chunk',
          "print('intact' if hashlib.sha256(got).digest() == hashlib.sha256(data).digest() else 'corrupt', len(got), flush=True)",
          `open(${JSON.stringify(echoed)} + '.tmp', 'w').write(str(s.getsockname()[1]))`,
          `os.rename(${JSON.stringify(echoed)} + '.tmp', ${JSON.stringify(echoed)})`,
          `while not os.path.exists(${JSON.stringify(go)}): time.sleep(0.05)`,
          'try:',
          "    s.sendall(b'again'); d = s.recv(8); print('echoed' if d else 'closed')",
          'except Exception:',
          "    print('cut')",
        ].join('\n'),
      ],
      60_000,
    );
    let settled = false;
    void session.then(() => (settled = true));
    const deadline = Date.now() + 45_000;
    while (!existsSync(echoed) && !settled && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    // That connection (the sandbox's port, on the link's intercept port) is the relay's now.
    const holder = existsSync(echoed)
      ? execFileSync(
          'ss',
          [
            '-Htnp',
            'src',
            `${hostAddress}:15001`,
            'dst',
            `${sandboxAddress}:${readFileSync(echoed, 'utf8')}`,
          ],
          { encoding: 'utf8' },
        )
      : '';
    point.setPolicy(desktopId, NONE);
    writeFileSync(go, '');
    const ran = await session;
    const lines = ran.stdout.split('\n').map((l) => l.trim());
    expect(lines, ran.stderr).toEqual([`intact ${4 << 20}`, 'cut', '']);
    expect(holder).toContain('"egress-relay"');
    expect(
      await deniedOf({ protocol: 'tcp', ip: '203.0.113.20', port: 7, rule: 'default:none' }),
    ).not.toHaveLength(0);
    point.setPolicy(desktopId, OPEN);
  });

  it('a bound host accepted by the relay comes back to the point: TLS terminated, header added', async () => {
    point.setPolicy(desktopId, OPEN);
    expect(point.relayed).toBe(true);
    const value = `Bearer ${randomBytes(8).toString('hex')}`;
    point.setInjections(desktopId, [
      { hosts: ['api.example.test'], header: 'Authorization', value },
    ]);
    onTestFinished(() => void point.setInjections(desktopId, []));
    const bundle = join(scratchDir, 'both-cas.pem');
    writeFileSync(bundle, `${readFileSync(injectCaPath, 'utf8').trim()}\n${internet.caPem}`);
    const bound = await runInNetns(netns, [
      'curl',
      '-sSv',
      '-m',
      '10',
      '--cacert',
      bundle,
      'https://api.example.test/echo-headers',
    ]);
    expect(bound.stdout).toContain('"authorization"');
    expect(bound.stderr).toMatch(/issuer: CN=Cubicle egress point test CA/);
    expect(bound.stdout).not.toContain(value);
    expect(
      internet.seen.some(
        (r) => r.host === 'api.example.test' && r.headers['authorization'] === value,
      ),
    ).toBe(true);
    // Another host keeps its own certificate and gets nothing added.
    const other = await curl('-sS', 'https://allowed.example.test/echo-headers');
    expect(other.stdout).not.toContain('authorization');
  });

  it('a relay that dies leaves the point serving: the link is served in Node again', async () => {
    point.setPolicy(desktopId, OPEN);
    const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8');
    const relayPid = children
      .trim()
      .split(/\s+/)
      .map(Number)
      .find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'egress-relay');
    expect(relayPid).toBeGreaterThan(0);
    process.kill(relayPid!, 'SIGKILL');
    // The relay's listener died with it; the point takes the link back once it sees the exit.
    const deadline = Date.now() + 10_000;
    while (point.relayed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(point.relayed).toBe(false);
    while (listenerOf() !== 'node' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(listenerOf()).toBe('node');
    const session = await runInNetns(
      netns,
      [
        '/usr/bin/python3',
        '-c',
        [
          'import hashlib, os, socket, threading',
          "s = socket.create_connection(('203.0.113.20', 7), timeout=20)",
          'data = os.urandom(2 << 20)',
          'threading.Thread(target=lambda: s.sendall(data), daemon=True).start()',
          "got = b''",
          'while len(got) < len(data):',
          '    chunk = s.recv(1 << 16)',
          '    if not chunk: break',
          '    got += chunk',
          "print('intact' if got == data else 'corrupt', len(got))",
        ].join('\n'),
      ],
      60_000,
    );
    expect(session.stdout.trim()).toBe(`intact ${2 << 20}`);
    expect(point.relayed).toBe(false);
  });

  it('a link is removed with its sandbox, and after a crash by its own names only', async () => {
    const links = () => execFileSync('ip', ['-br', 'link'], { encoding: 'utf8' });
    const gone = `egresstest-sbx_gone${randomBytes(3).toString('hex')}`;
    const alive = `egresstest-sbx_alive${randomBytes(3).toString('hex')}`;
    const other = `otherscope-sbx_${randomBytes(3).toString('hex')}`;
    const plans = await Promise.all([gone, alive, other].map((id) => point.attach(id, OPEN)));
    onTestFinished(async () => {
      for (const id of [gone, alive, other]) await point.detach(id);
    });
    const namespaces = plans.map((p) => p.netnsPath.split('/').pop()!);
    // A worker that crashes leaves its links behind; the next one's sweep removes those of its
    // own scope whose desktop is gone, and nothing else.
    const crashed = await EgressPoint.start({ report: () => undefined });
    const removed = await crashed.sweep('egresstest-', (id) => id === alive || id === desktopId);
    expect(removed).toContain(gone);
    for (const id of [alive, other, desktopId]) expect(removed).not.toContain(id);
    const left = readdirSync('/run/netns');
    expect(left).not.toContain(namespaces[0]);
    expect(left).toEqual(expect.arrayContaining([namespaces[1]!, namespaces[2]!, internet.netns]));
    await crashed.close();
    // detach removes the namespace, its veth pair and the index claim.
    for (const id of [alive, other]) await point.detach(id);
    const after = readdirSync('/run/netns');
    for (const ns of namespaces) expect(after).not.toContain(ns);
    for (const ns of namespaces) {
      const index = /^cubicle-egress-(\d+)-/.exec(ns)![1]!;
      expect(links()).not.toMatch(new RegExp(`^cbe${index}@`, 'm'));
      expect(existsSync(`/run/cubicle-egress/links/${index}`)).toBe(false);
    }
    // The test's own sandbox link is untouched.
    expect(after).toContain(netns.split('/').pop());
  });
});
