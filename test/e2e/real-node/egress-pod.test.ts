// Issue 32 on a real node: a desktop Pod run by kubelet + containerd + runc reaches the web only
// through the Kubernetes egress point. The point (apps/worker/dist/egress-point/main.js) runs on
// the node's bridge address — there is no Service here: the worker is given that address
// (KUBE_EGRESS_POINT_ADDRESS) instead of a Service name — and names the sandbox by the Pod IP its
// queries and connections come from (no NAT between the bridge and the host). From a shell in
// the Pod, with the proxy variables and resolv.conf the worker gave it: an allowlisted HTTPS site
// of the fake internet answers through the point, a denied one is refused and becomes an
// `egress.denied` webhook and a line on the claim. Not shown here: that a process ignoring the
// proxy is stopped by the NetworkPolicy — this node's CNI (`bridge`) enforces no policy; such a
// process is stopped here only because the Pods have no route off the bridge (checked too, and
// said so). No packet leaves this machine: the point asks only the fake DNS and may dial only the
// fake ranges.
import { randomBytes } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { sandboxObjectName } from '@cubicle/backends';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealNodeCluster, type RealNodeCluster } from '../../harness/kube/real-node/index.js';
import { startFakeInternet, type FakeInternet } from '../../support/fake-internet/fake-internet.js';
import {
  startEgressPointProcess,
  type EgressPointProcess,
} from '../support/egress-point-process.js';
import { startStack, waitFor, type Stack } from '../support/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { realNodeBackend } from './support/real-node-backend.js';

const PROXY_PORT = 3128;
/** A stored secret bound to api.example.test: only the point and the fake server may see it. */
const TOKEN = `cub-rn-${randomBytes(12).toString('hex')}`;

/**
 * fetchIn is a Python script for the Pod's shell (urllib honours HTTPS_PROXY, as most clients
 * do): the page, or `refused: <why>`. Single-quoted for sh, so the code holds double quotes only.
 */
const fetchIn = (url: string, cafile = '/tmp/fake-ca.pem') =>
  `python3 -c '
import ssl, urllib.request
ctx = ssl.create_default_context(cafile="${cafile}")
try:
    print(urllib.request.urlopen(${JSON.stringify(url)}, context=ctx, timeout=10).read().decode())
except Exception as e:
    print("refused:", e)
'`;

describe('a desktop Pod on a real node reaches the web only through the egress point', () => {
  let rn: RealNodeCluster;
  let s: Stack;
  let internet: FakeInternet;
  let receiver: WebhookReceiver;
  let point: EgressPointProcess | undefined;
  let namespace = '';
  let claimId = '';
  let sandboxId = '';
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const shell = async (command: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, { command, timeout_ms: 30_000 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { stdout: string; stderr: string; exit_code: number | null };
  };
  const core = () => rn.cluster.kubeconfig.makeApiClient(CoreV1Api);

  beforeAll(async () => {
    // The minimal desktop with the browsers and certutil (desktop-browser, from the published
    // desktop's package list; scripts/images/build.mjs): its browsers are part of the case.
    // Built (if its inputs changed) before the fake internet is up: that routes the documentation
    // ranges into its namespace, and this machine's Debian mirror may answer on one of them.
    rn = await startRealNodeCluster({ images: ['desktop-browser'], log: console.log });
    internet = await startFakeInternet();
    namespace = await rn.cluster.createNamespace();
    const hostIp = rn.network.hostIp;
    s = await startStack({
      customBackend: realNodeBackend(rn, namespace, {
        image: rn.images['desktop-browser']!.ref,
        workerEnv: {
          KUBE_EGRESS_POINT_ADDRESS: hostIp,
          KUBE_EGRESS_POINT_PROXY_PORT: String(PROXY_PORT),
          KUBE_EGRESS_POINT_SELECTOR:
            'app.kubernetes.io/name=cubicle,app.kubernetes.io/component=egress',
        },
      }),
    });
    // The point on the bridge address: DNS on 53 (the Pods' resolv.conf names no port).
    point = startEgressPointProcess({
      stack: s,
      internet,
      kubeconfigPath: rn.cluster.kubeconfigPath,
      namespace,
      host: hostIp,
      dnsPort: 53,
      proxyPort: PROXY_PORT,
    });
    receiver = await startWebhookReceiver();
    const hook = await call('POST', '/v1/webhooks', {
      url: receiver.url,
      events: ['egress.denied'],
    });
    expect(hook.statusCode, hook.body).toBe(201);

    const secret = await call('PUT', '/v1/secrets/API_TOKEN', {
      value: TOKEN,
      inject: { hosts: ['api.example.test'], header: 'Authorization', format: 'Bearer {value}' },
    });
    expect(secret.statusCode, secret.body).toBe(201);
    const put = await call('PUT', '/v1/pools/web', {
      ...s.backend.pool,
      // A core and 2 GiB: Chromium runs in it too (the node has two cores, shared).
      cpu: 1,
      memory_mb: 2048,
      autoscaling: { min: 0, initial: 1, max: 1 },
      egress: { mode: 'allowlist', allow: ['allowed.example.test', 'api.example.test'], deny: [] },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => {
        point!.assertRunning();
        return (await call('GET', '/v1/pools/web')).json().counts.warm === 1;
      },
      240_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', '/v1/pools/web/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    sandboxId = claim.json().sandbox.id;
    // The fake internet's CA, for the Pod's client to verify the sites (not a secret).
    const ca = Buffer.from(internet.caPem).toString('base64');
    expect((await shell(`echo ${ca} | base64 -d > /tmp/fake-ca.pem && echo ok`)).stdout).toContain(
      'ok',
    );
    // + up to 15 min: on a fresh machine npm test still builds this suite's images beside Vitest.
  }, 1_500_000);
  afterAll(async () => {
    await point?.stop();
    await s?.close();
    await rn?.stop();
    await receiver?.close();
    await internet?.stop();
  }, 180_000);

  it('the Pod resolves through the point and has it as its proxy', async () => {
    const pod = await core().readNamespacedPod({ name: sandboxObjectName(sandboxId), namespace });
    expect(pod.spec?.dnsPolicy).toBe('None');
    const resolv = (await shell('cat /etc/resolv.conf')).stdout;
    expect(resolv).toContain(`nameserver ${rn.network.hostIp}`);
    expect((await shell('echo "$HTTPS_PROXY"')).stdout.trim()).toBe(
      `http://${rn.network.hostIp}:${PROXY_PORT}`,
    );
    const lookup = await shell(
      `python3 -c "import socket\nfor n in ('allowed.example.test','denied.example.test'):\n try: print(n, socket.gethostbyname(n))\n except Exception as e: print(n, 'none')"`,
    );
    expect(lookup.stdout).toContain('allowed.example.test 198.51.100.10');
    expect(lookup.stdout).toContain('denied.example.test none');
  });

  it('reaches an allowed site through the point; a denied one is refused and reported', async () => {
    const allowed = await shell(fetchIn('https://allowed.example.test/'));
    expect(allowed.stdout, allowed.stderr).toContain('"host":"allowed.example.test"');
    const denied = await shell(fetchIn('https://other.example.test/'));
    expect(denied.stdout).toMatch(/^refused: .*403/);
    const hooks = await receiver.waitFor(
      1,
      (w) =>
        w.payload.type === 'egress.denied' &&
        (w.payload.data as { name?: string }).name === 'other.example.test',
      15_000,
    );
    expect(hooks[0]!.payload.data).toMatchObject({
      protocol: 'tcp',
      port: 443,
      rule: 'default:allowlist',
    });
    const page = (await call('GET', `/v1/claims/${claimId}/egress-events`)).json();
    expect(page.data.some((e: { name: string }) => e.name === 'other.example.test')).toBe(true);
  });

  it('a process ignoring the proxy reaches nothing (here for want of a route, not a policy)', async () => {
    const raw = await shell(
      `python3 -c "import socket\ntry:\n socket.create_connection(('198.51.100.10', 443), timeout=3); print('open')\nexcept Exception as e: print('refused', e)"`,
    );
    expect(raw.stdout).toMatch(/^refused/);
  });

  it('a credential bound to a host is added at the point; the Pod trusts the egress CA and never holds the value', async () => {
    // The Pod's own trust files (from its guest Secret): the system bundle with the CA, the CA
    // alone for Node; a client reading the system bundle accepts the point's certificate.
    const trust = await shell(
      'grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt; head -1 /run/cubicle/egress-ca.pem; echo "$NODE_EXTRA_CA_CERTS"',
    );
    expect(trust.stdout).toContain('-----BEGIN CERTIFICATE-----');
    expect(trust.stdout).toContain('/run/cubicle/egress-ca.pem');
    const seen = () =>
      internet.seen.filter((r) => r.host === 'api.example.test' && r.path === '/echo-headers');
    let bound = { stdout: '', stderr: '' };
    await waitFor(
      async () => {
        bound = await shell(
          fetchIn('https://api.example.test/echo-headers', '/etc/ssl/certs/ca-certificates.crt'),
        );
        return seen().at(-1)?.headers.authorization === `Bearer ${TOKEN}`;
      },
      30_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(bound)}; point: ${point!.output()}`);
    });
    expect(bound.stdout).toContain('authorization');
    // Nowhere in the Pod: its environment, every process's environment and command line, its
    // writable files and trust files; a decoy of the same shape shows the search finds one.
    const decoy = `cub-rn-${'0'.repeat(24)}`;
    const search = await shell(
      `echo ${decoy} > /tmp/decoy; { env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run /etc/ssl/certs/ca-certificates.crt; } 2>/dev/null | grep -ao 'cub-rn-[0-9a-f]*' | sort -u`,
    );
    expect(search.stdout.split('\n')).toContain(decoy);
    expect(search.stdout).not.toContain(TOKEN);
    expect(point!.output()).not.toContain(TOKEN);
    expect(s.worker.output()).not.toContain(TOKEN);
  });

  it('Chromium in the Pod opens the bound host: it trusts the egress CA and the page comes with the header added', async () => {
    // Chromium reads no system bundle: only its root store and ~/.pki/nssdb, where the launcher
    // put the CA at start with certutil (libnss3-tools). Without it the point's certificate for
    // api.example.test is refused: the window shows Chromium's "Privacy error" page instead.
    const before = internet.seen.length;
    const launched = await call('POST', `/v1/claims/${claimId}/windows/launch`, {
      app: 'browser',
      url: 'https://api.example.test/',
      wait_for_window_ms: 120_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    expect(launched.json().window_wait).toBe('found');
    const windowId = launched.json().window.window_id as number;
    // The page: the fake site's JSON of what it saw (an injected credential shows as "[sent]"),
    // read from the window's accessibility tree; the title follows the page (or its error page).
    let title = '';
    let observed = '';
    await waitFor(
      async () => {
        const res = await call('POST', `/v1/claims/${claimId}/observe`, {
          window_id: windowId,
          include_screenshot: false,
        });
        if (res.statusCode !== 200) return false;
        observed = res.body;
        title = (res.json() as { window?: { title?: string } }).window?.title ?? '';
        // Until the title follows the page, the tree may still be the blank tab's.
        if (/^(Untitled|New Tab|about:blank)/.test(title)) return false;
        return observed.includes('[sent]') || /Privacy error|ERR_/.test(`${title} ${observed}`);
      },
      90_000,
      1000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: title ${title}; ${observed.slice(0, 2000)}`);
    });
    // A refused certificate shows as Chromium's interstitial: "Privacy error", NET::ERR_CERT_….
    const why = `${title}: ${/NET::ERR_[A-Z_]+/.exec(observed)?.[0] ?? observed.slice(0, 500)}`;
    // Chromium titles a page without <title> by its URL (bare host: no scheme, no slash).
    expect(title, why).toBe('api.example.test - Chromium');
    // The site's JSON in the page's tree: it saw an Authorization header (and says "[sent]").
    expect(observed, why).toMatch(/authorization[\\"]*:\s*[\\"]*\[sent\]/);
    expect(observed).not.toMatch(/Privacy error|ERR_CERT/);
    const fromChromium = internet.seen
      .slice(before)
      .filter((r) => r.host === 'api.example.test' && /Chrome/.test(r.headers['user-agent'] ?? ''));
    expect(fromChromium.length).toBeGreaterThan(0);
    expect(fromChromium.find((r) => r.path === '/')?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // The trust Chromium used: the launcher's NSS entry, written with the image's certutil.
    const nss = await shell('certutil -L -d sql:$HOME/.pki/nssdb 2>&1');
    expect(nss.stdout).toMatch(/Cubicle egress CA\s+C,,/);
    // The page does not hold the value (the site answers "[sent]"), nor does the Pod after it.
    expect(observed).not.toContain(TOKEN);
    await shell(`kill ${launched.json().pid as number} 2>/dev/null; true`);
    const search = await shell(
      `{ env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run; } 2>/dev/null | grep -ao 'cub-rn-[0-9a-f]*' | sort -u`,
    );
    expect(search.stdout).not.toContain(TOKEN);
  });

  it('Firefox in the Pod trusts the egress CA through its profile, and its request carries the header', async () => {
    // Firefox reads its profile's NSS database, where the guest adds the CA with certutil when it
    // prepares the profile; it follows the proxy variables (system proxy settings, the default).
    const before = internet.seen.length;
    const launched = await call('POST', `/v1/claims/${claimId}/windows/launch`, {
      app: 'browser.firefox',
      url: 'https://api.example.test/',
      wait_for_window_ms: 120_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    const windowId = launched.json().window.window_id as number;
    // An untrusted certificate stops the page before any HTTP reaches the site: Firefox shows its
    // "Warning: Potential Security Risk Ahead" page instead.
    const fromFirefox = () =>
      internet.seen
        .slice(before)
        .find(
          (r) =>
            r.host === 'api.example.test' &&
            r.path === '/' &&
            /Firefox/.test(r.headers['user-agent'] ?? ''),
        );
    let title = '';
    await waitFor(
      async () => {
        if (fromFirefox()) return true;
        const res = await call('POST', `/v1/claims/${claimId}/observe`, {
          window_id: windowId,
          include_screenshot: false,
        });
        title = res.statusCode === 200 ? (res.json().window?.title ?? '') : title;
        return /Security Risk|Secure Connection Failed|Error/.test(title);
      },
      90_000,
      1000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: window ${title}`);
    });
    expect(fromFirefox(), title).toBeDefined();
    expect(fromFirefox()?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const nss = await shell('certutil -L -d sql:$HOME/.cubicle/firefox 2>&1');
    expect(nss.stdout).toMatch(/Cubicle egress CA\s+C,,/);
    await shell(`kill ${launched.json().pid as number} 2>/dev/null; true`);
  });
});
