// Issue 32, credentials injected at egress, through the whole Cubicle on the local backend: a
// tenant's stored secret bound to a host (`inject` on PUT /v1/secrets/{name}) is added as a header
// by the worker's egress point to HTTPS requests a claimed desktop makes to that host — curl and
// Chromium trust the installation's egress CA (made by the worker, its key sealed in the
// database) through the sandbox's own stores — while the value is nowhere in the sandbox, the
// worker's logs, the claim's egress events or the audit log. Other hosts are spliced untouched;
// rotating the secret changes what is sent and deleting it stops injection on the running claim.
// All on the test's fake internet: no packet leaves this machine.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAKE_DNS,
  FAKE_RANGES,
  startFakeInternet,
  type FakeInternet,
} from '../support/fake-internet/fake-internet.js';
import { ensureEgressRelay } from '../../scripts/tools/egress-relay/tool.mjs';
import { memoryHolding, sandboxPids } from '../support/fake-internet/sandbox-memory.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

/** Values of a shape the sandbox search looks for (cub-<24 hex>), never typed inside it. */
const value = () => `cub-${randomBytes(12).toString('hex')}`;
const SHAPE = "grep -ao 'cub-[0-9a-f]\\{24\\}' | sort -u";

describe('credentials injected at egress (local backend)', () => {
  let s: Stack;
  let internet: FakeInternet;
  let claimId = '';
  let firefoxPid = 0;
  const caFile = join(tmpdir(), `egress-inject-ca-${process.pid}.pem`);
  const first = value();
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const sh = async (command: string) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, {
      argv: ['sh', '-c', command],
      timeout_ms: 60_000,
    });
    expect(res.statusCode, res.body).toBe(200);
    const out = res.json() as { stdout: string; stderr: string; exit_code: number };
    return { code: out.exit_code, out: `${out.stdout}${out.stderr}`.trim() };
  };
  const seenAt = (path: string) => internet.seen.filter((r) => r.path === path);

  beforeAll(async () => {
    internet = await startFakeInternet();
    writeFileSync(caFile, internet.caPem);
    s = await startStack();
    s.workerEnv.CUBICLE_EGRESS_UPSTREAM_DNS = FAKE_DNS;
    s.workerEnv.CUBICLE_EGRESS_UPSTREAM_GUARD = FAKE_RANGES.join(',');
    // This source's relay, not whichever checkout last repointed the machine's shared link.
    s.workerEnv.CUBICLE_EGRESS_RELAY = await ensureEgressRelay({
      log: () => undefined,
      link: false,
    });
    // The point verifies bound hosts upstream against the fake internet's CA (its sites' issuer).
    s.workerEnv.CUBICLE_EGRESS_UPSTREAM_CA = caFile;
    await s.restartWorker();
    const secret = await call('PUT', '/v1/secrets/API_TOKEN', {
      value: first,
      inject: { hosts: ['api.example.test'], header: 'Authorization', format: 'Bearer {value}' },
    });
    expect(secret.statusCode, secret.body).toBe(201);
    expect(secret.json()).toMatchObject({
      name: 'API_TOKEN',
      version: 1,
      inject: { hosts: ['api.example.test'], header: 'Authorization', format: 'Bearer {value}' },
    });
    expect(secret.body).not.toContain(first);
    const put = await call('PUT', '/v1/pools/net', {
      ...s.backend.pool,
      autoscaling: { min: 0, initial: 1, max: 1 },
      egress: {
        mode: 'allowlist',
        allow: ['allowed.example.test', 'api.example.test:443'],
        deny: [],
      },
    });
    expect(put.statusCode, put.body).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/net')).json().counts.warm === 1,
      120_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; worker: ${s.worker.output().slice(-3000)}`);
    });
    const claim = await call('POST', '/v1/pools/net/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id as string;
  });
  afterAll(async () => {
    await s?.close();
    await internet?.stop();
    rmSync(caFile, { force: true });
  });

  it('curl to the bound host: the server gets the header, the sandbox never holds it', async () => {
    // The claim's activation reaches the point within moments (its sandbox's policy reloads).
    let bound = { code: -1, out: '' };
    await waitFor(
      async () => {
        bound = await sh('curl -sS -m 10 -v https://api.example.test/echo-headers 2>&1');
        return bound.out.includes('"authorization"');
      },
      10_000,
      250,
    ).catch(() => {
      throw new Error(
        `no header injected: ${bound.out}; worker: ${s.worker.output().slice(-2000)}`,
      );
    });
    // The sandbox's own trust store (no --cacert) accepts the installation's egress CA.
    expect(bound.code).toBe(0);
    expect(bound.out).toContain('issuer: CN=Cubicle egress CA');
    expect(seenAt('/echo-headers').at(-1)?.headers.authorization).toBe(`Bearer ${first}`);
    expect(bound.out).not.toContain(first);
    // The sandbox's environment, files and every process's environment and command line hold no
    // copy; a decoy of the same shape shows the search would find one.
    const decoy = `cub-${'0'.repeat(24)}`;
    await sh(`echo ${decoy} > /tmp/decoy`);
    const search = await sh(
      `{ env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run /etc/ssl/certs/ca-certificates.crt; } 2>/dev/null | ${SHAPE}`,
    );
    expect(search.out.split('\n')).toContain(decoy);
    expect(search.out).not.toContain(first);
  });

  it('an unbound host gets no header and its own certificate', async () => {
    const before = seenAt('/plain').length;
    const other = await sh(
      `cat > /tmp/site-ca.pem <<'EOF'\n${internet.caPem}EOF\ncurl -sS -m 10 -v --cacert /tmp/site-ca.pem https://allowed.example.test/plain 2>&1`,
    );
    expect(other.code, other.out).toBe(0);
    expect(other.out).toContain('issuer: CN=Cubicle fake internet test CA');
    const seen = seenAt('/plain');
    expect(seen.length).toBe(before + 1);
    expect(seen.at(-1)?.headers.authorization).toBeUndefined();
    // Plain HTTP to the bound host is not given the credential (and port 80 is not allowed here).
    expect(JSON.stringify(internet.seen.filter((r) => r.scheme === 'http'))).not.toContain(first);
  });

  it('Chromium in the sandbox trusts the egress CA (NSS) and its request carries the header', async () => {
    const nss = await sh('certutil -L -d sql:$HOME/.pki/nssdb');
    expect(nss.out).toMatch(/Cubicle egress CA\s+C,,/);
    const before = seenAt('/echo-headers').length;
    const dom = await sh(
      'chromium --no-sandbox --headless=new --disable-gpu --dump-dom https://api.example.test/echo-headers 2>&1 | grep -o "header_names.*\\|net::ERR_[A-Z_]*" | head -3',
    );
    expect(dom.out).toContain('authorization');
    const seen = seenAt('/echo-headers').slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)?.headers.authorization).toBe(`Bearer ${first}`);
    expect(seen.at(-1)?.headers['user-agent']).toMatch(/Chrome/);
  });

  it('Firefox trusts the egress CA through its profile and its request carries the header', async () => {
    const launched = await call('POST', `/v1/claims/${claimId}/windows/launch`, {
      app: 'browser.firefox',
      url: 'https://api.example.test/echo-headers',
      wait_for_window_ms: 90_000,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    const nss = await sh('certutil -L -d sql:$HOME/.cubicle/firefox');
    expect(nss.out).toMatch(/Cubicle egress CA\s+C,,/);
    // The page loads once the window is up; an untrusted certificate would stop it before HTTP.
    await waitFor(
      async () =>
        seenAt('/echo-headers').some(
          (r) =>
            /Firefox/.test(r.headers['user-agent'] ?? '') &&
            r.headers.authorization === `Bearer ${first}`,
        ),
      60_000,
      500,
    );
    // Kept running: the next case reads its memory too.
    firefoxPid = launched.json().pid as number;
  });

  it('the value is in no log, egress event or audit entry', async () => {
    // After both browsers ran: nothing in their profiles, caches or processes either.
    const search = await sh(
      `{ env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline; grep -rsa . /tmp /home /run; } 2>/dev/null | ${SHAPE}`,
    );
    expect(search.out).not.toContain(first);
    // Nor in any sandbox process's memory, read from the host; a marker held by a shell in the
    // sandbox shows the reading finds what is there.
    const marker = value();
    await sh(`nohup sh -c "sleep 30; echo ${marker}" >/dev/null 2>&1 &`);
    const claimed = await s.db.claim.findUniqueOrThrow({ where: { id: claimId } });
    // The link's namespace is named after the desktop, whose id ends with the sandbox's.
    const pids = sandboxPids(claimed.sandboxId!);
    expect(pids.length).toBeGreaterThan(3);
    expect(memoryHolding(pids, marker).pids.length).toBeGreaterThan(0);
    const memory = memoryHolding(pids, first);
    console.log(
      `[egress-inject] searched ${Math.round(memory.bytes / 2 ** 20)} MiB of ${pids.length} sandbox processes' memory`,
    );
    expect(memory.pids).toEqual([]);
    await sh(`kill ${firefoxPid} 2>/dev/null; true`);
    const events = await call('GET', `/v1/claims/${claimId}/egress-events`);
    expect(events.statusCode).toBe(200);
    const network = await call('GET', `/v1/claims/${claimId}/egress`);
    const audit = await s.db.auditEvent.findMany({ where: { tenantId: s.tenantId } });
    const lists = await call('GET', '/v1/secrets');
    for (const text of [
      s.worker.output(),
      events.body,
      network.body,
      JSON.stringify(audit),
      lists.body,
    ])
      expect(text).not.toContain(first);
    expect(lists.json().data).toEqual([
      expect.objectContaining({ name: 'API_TOKEN', inject: expect.any(Object) }),
    ]);
  });

  it('rotating the secret changes the header; deleting it stops injection at once', async () => {
    const second = value();
    const rotated = await call('PUT', '/v1/secrets/API_TOKEN', { value: second });
    expect(rotated.statusCode, rotated.body).toBe(201);
    // Omitted `inject` keeps the binding.
    expect(rotated.json().inject).toMatchObject({ hosts: ['api.example.test'] });
    await waitFor(
      async () => {
        await sh('curl -sS -m 10 https://api.example.test/echo-headers');
        return seenAt('/echo-headers').at(-1)?.headers.authorization === `Bearer ${second}`;
      },
      5_000,
      100,
    );
    const deleted = await call('DELETE', '/v1/secrets/API_TOKEN');
    expect(deleted.statusCode).toBe(204);
    // With no binding the host is spliced again: the sandbox sees the site's own certificate,
    // which its store does not trust (curl 60), and with that CA the server gets no header.
    const started = performance.now();
    await waitFor(
      async () => (await sh('curl -sS -m 10 https://api.example.test/echo-headers')).code === 60,
      5_000,
      50,
    );
    console.log(`[egress-inject] delete to spliced: ${Math.round(performance.now() - started)} ms`);
    const plain = await sh(
      `cat > /tmp/site-ca.pem <<'EOF'\n${internet.caPem}EOF\ncurl -sS -m 10 --cacert /tmp/site-ca.pem https://api.example.test/echo-headers`,
    );
    expect(plain.code, plain.out).toBe(0);
    expect(seenAt('/echo-headers').at(-1)?.headers.authorization).toBeUndefined();
  });
});
