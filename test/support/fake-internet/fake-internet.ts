// The tests' internet: a network namespace this test run creates, with no route off the
// machine, whose servers (fake-internet-server.mjs) answer on documentation-range addresses
// (198.51.100.0/24, 203.0.113.0/26: never routed on the real internet). The host reaches it
// through a veth link and two routes for exactly those ranges; everything is torn down by the
// names made here. Requires root (CAP_NET_ADMIN).
//
// Those routes are the host's, for as long as a test runs: an address the machine really uses
// inside them would be captured. This machine's package-registry proxy answers at 203.0.113.80,
// and while the whole /24 was routed here, apt, npm and the Go proxy got the fake sites' answers
// (an image build failed: "InRelease: Clearsigned file isn't valid, got 'NOSPLIT'"). Hence the
// /26, and machineAddressesIn() refuses to start when any address the machine uses falls inside.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { acquireMachineLock } from '../../harness/machine-lock.js';

const SERVER = fileURLToPath(new URL('./fake-internet-server.mjs', import.meta.url));
const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
/** The only ranges the fake internet holds, and the only ones its routes send anywhere. */
export const FAKE_RANGES = ['198.51.100.0/24', '203.0.113.0/26'];
export const FAKE_DNS = '203.0.113.53';

/** The test zone: every name resolves into the fake ranges, except those meant to rebind. */
export const FAKE_ZONE: Record<string, string[]> = {
  'allowed.example.test': ['198.51.100.10'],
  'api.example.test': ['198.51.100.11'],
  '*.wild.example.test': ['198.51.100.12'],
  'denied.example.test': ['203.0.113.20'],
  'other.example.test': ['203.0.113.21'],
  // DNS rebinding: allowed-looking names answering addresses a sandbox must never reach.
  'rebind.example.test': ['10.0.0.5'],
  'loopback.example.test': ['127.0.0.1'],
  'metadata.example.test': ['169.254.169.254'],
  'mixed.example.test': ['198.51.100.13', '192.168.1.1'],
};

export interface FakeInternet {
  netns: string;
  /** PEM of the CA that signed every HTTPS site's certificate. */
  caPem: string;
  caPath: string;
  dns: string;
  /** Every HTTP(S) request the sites saw, headers included, in order. */
  seen: { scheme: string; host: string | null; path: string; headers: Record<string, string> }[];
  stop(): Promise<void>;
}

const ip = (...args: string[]) => execFileSync('ip', args, { env: { PATH }, stdio: 'pipe' });

/** The hosts this machine's bootstrap fetches from (apt, npm, the Go module proxy, PyPI). */
const REGISTRY_HOSTS = [
  'deb.debian.org',
  'security.debian.org',
  'registry.npmjs.org',
  'proxy.golang.org',
  'sum.golang.org',
  'pypi.org',
  'files.pythonhosted.org',
];

const ipv4ToInt = (address: string) =>
  address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);

/** inRange says whether IPv4 `address` is inside `cidr`. */
export function inRange(address: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/') as [string, string];
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4ToInt(base) / size) * size;
  const n = ipv4ToInt(address);
  return n >= start && n < start + size;
}

/**
 * machineAddressesIn answers the addresses this machine uses — its interfaces' and gateways',
 * its resolvers', the package registries' as it resolves them — that fall inside `ranges`: the
 * fake internet's routes would capture their traffic.
 */
export function machineAddressesIn(ranges: string[]): string[] {
  const quiet = (command: string, args: string[]) => {
    try {
      return execFileSync(command, args, {
        env: { PATH },
        stdio: 'pipe',
        timeout: 5_000,
      }).toString();
    } catch {
      return '';
    }
  };
  const text = [
    quiet('ip', ['-4', 'addr', 'show']),
    quiet('ip', ['-4', 'route', 'show', 'table', 'all']),
    (() => {
      try {
        return readFileSync('/etc/resolv.conf', 'utf8');
      } catch {
        return '';
      }
    })(),
    ...REGISTRY_HOSTS.map((host) => quiet('getent', ['ahostsv4', host])),
  ].join('\n');
  const addresses = new Set(text.match(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g) ?? []);
  return [...addresses].filter((address) => ranges.some((range) => inRange(address, range)));
}

function makeCertificates(dir: string): {
  key: string;
  cert: string;
  caPem: string;
  caPath: string;
} {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Cubicle fake internet test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', ...ec, '-keyout', 'site.key', '-out', 'site.csr', '-subj', '/CN=fake-internet');
  const names = Object.keys(FAKE_ZONE).map((n) => `DNS:${n}`);
  writeFileSync(
    join(dir, 'site.ext'),
    `subjectAltName=${names.join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'site.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'site.pem',
    '-days',
    '2',
    '-extfile',
    'site.ext',
  );
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    key: read('site.key'),
    cert: read('site.pem'),
    caPem: read('ca.pem'),
    caPath: join(dir, 'ca.pem'),
  };
}

/** makeTestCa makes a throwaway CA (ECDSA P-256): the installation CA of egress tests. */
export function makeTestCa(commonName: string): { certPem: string; keyPem: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-test-ca-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.pem',
        '-days',
        '2',
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return {
      certPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
      keyPem: readFileSync(join(dir, 'ca.key'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * startFakeInternet creates namespace `cubicle-fakenet-<tag>` linked to the host by veth
 * `cbf<tag>` (10.216.<n>.0/30), routes the fake ranges through it (checked before any traffic),
 * and starts the servers inside. Only one fake internet per machine at a time: the routes for
 * the documentation ranges are the host's.
 */
export async function startFakeInternet(): Promise<FakeInternet> {
  // Test files run two at a time (vitest.config.ts): one waits for the other's fake internet.
  const release = await acquireMachineLock('fake-internet', { log: (line) => console.log(line) });
  // Checked under the lock: another run's fake internet (its routes) is gone by now.
  const captured = machineAddressesIn(FAKE_RANGES);
  if (captured.length > 0) {
    release();
    throw new Error(
      `this machine uses ${captured.join(', ')} inside the fake internet's ranges (${FAKE_RANGES.join(', ')}): ` +
        'routing them into the test namespace would capture its real traffic; refusing to start',
    );
  }
  const tag = randomBytes(3).toString('hex');
  const netns = `cubicle-fakenet-${tag}`;
  const hostIf = `cbf${tag}`;
  const octet = 1 + (parseInt(tag, 16) % 250);
  const [hostAddress, innerAddress] = [`10.216.${octet}.1`, `10.216.${octet}.2`];
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-fakenet-'));
  let server: ChildProcess | null = null;
  const stop = async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server!.once('exit', resolve));
    }
    for (const range of FAKE_RANGES)
      try {
        ip('route', 'del', range, 'dev', hostIf);
      } catch {
        /* gone with the link */
      }
    for (const args of [
      ['netns', 'delete', netns],
      ['link', 'delete', hostIf],
    ])
      try {
        ip(...args);
      } catch {
        /* already gone */
      }
    rmSync(dir, { recursive: true, force: true });
    release();
  };
  try {
    ip('netns', 'add', netns);
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
    ip('-n', netns, 'addr', 'add', `${innerAddress}/30`, 'dev', 'eth0');
    ip('-n', netns, 'link', 'set', 'eth0', 'up');
    // Replies go back to the host; nothing else is reachable from inside.
    ip('-n', netns, 'route', 'add', 'default', 'via', hostAddress);
    for (const range of FAKE_RANGES) {
      // Every address of the ranges is this namespace's own (AnyIP).
      ip('-n', netns, 'route', 'add', 'local', range, 'dev', 'lo');
      ip('route', 'add', range, 'via', innerAddress, 'dev', hostIf);
    }
    for (const probe of ['198.51.100.10', FAKE_DNS]) {
      const route = ip('route', 'get', probe).toString();
      if (!route.includes(`dev ${hostIf}`))
        throw new Error(
          `the fake internet's route is not in place (${route.trim()}): refusing to send traffic`,
        );
    }
    const tls = makeCertificates(dir);
    const config = { zone: FAKE_ZONE, dnsAddress: FAKE_DNS, tls: { key: tls.key, cert: tls.cert } };
    server = spawn(
      'nsenter',
      [`--net=/run/netns/${netns}`, process.execPath, SERVER, JSON.stringify(config)],
      {
        env: { PATH },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const seen: FakeInternet['seen'] = [];
    const lines = createInterface({ input: server.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the fake internet did not start')), 10_000);
      lines.on('line', (line) => {
        if (line === 'ready') {
          clearTimeout(timer);
          return resolve();
        }
        const message = JSON.parse(line) as { seen?: FakeInternet['seen'][number] };
        if (message.seen) seen.push(message.seen);
      });
      server!.once('exit', (code) => reject(new Error(`the fake internet exited (${code})`)));
    });
    return { netns, caPem: tls.caPem, caPath: tls.caPath, dns: FAKE_DNS, seen, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
