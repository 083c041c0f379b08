/* eslint-disable @typescript-eslint/no-explicit-any -- API answers are read loosely; the contract checks them. */
// Persistent profiles (issue 34) end to end: real desktops (local backend), the real worker
// process, a real object store (fs, in the stack's temp dir). Chromium logs in to a page served by
// the test's own web server (a tiny server the test starts inside the desktop, where its Chromium
// can reach it on loopback), the claim is released, and a new claim with the same profile opens the
// page already logged in; a file in Documents survives; two concurrent claims of one profile give
// one 409; a worker killed (SIGKILL) in the middle of a save leaves the previous version whole and
// restorable; delete removes the profile's objects.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

const HOME = '/home/sandbox';
const PORT = 18765;
const tag = Math.random().toString(36).slice(2, 10);
const SESSION = `sess-${tag}`;
const NOTE = `${HOME}/Documents/notes.txt`;

// The test's web server: /login sets a persistent cookie and redirects; / greets whoever the
// cookie says, in the page title (what the window list shows). Every Cookie header is logged.
const SITE = `
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        cookie = self.headers.get('Cookie', '')
        with open('/tmp/site-cookies.log', 'a') as f: f.write(self.path + ' ' + cookie + '\\n')
        if self.path.startswith('/login'):
            self.send_response(302)
            self.send_header('Set-Cookie', 'session=${SESSION}; Max-Age=86400; Path=/; HttpOnly')
            self.send_header('Location', '/')
            self.end_headers(); return
        who = 'alice' if 'session=${SESSION}' in cookie else None
        title = ('Logged in as ' + who) if who else 'Please log in'
        body = ('<html><head><title>' + title + '</title></head><body>' + title + '</body></html>').encode()
        self.send_response(200)
        self.send_header('Content-Type', 'text/html')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers(); self.wfile.write(body)
http.server.HTTPServer(('127.0.0.1', ${PORT}), H).serve_forever()
`;

describe('persistent profiles on warm claims', () => {
  let s: Stack;
  const call = (
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = s.auth,
  ) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers,
    });
  const claim = (profile: string, headers?: Record<string, string>) =>
    call('POST', '/v1/pools/prof/claims', { profile, wait_seconds: 120 }, headers ?? s.auth);
  const shell = async (claimId: string, command: string, timeout_ms = 30_000) => {
    const res = await call('POST', `/v1/claims/${claimId}/shell`, { command, timeout_ms });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const profileRow = (name: string) =>
    s.db.profile.findUnique({ where: { tenantId_name: { tenantId: s.tenantId, name } } });
  /** Raw keys of one profile in the store (tenant prefix included). */
  const storedKeys = async (rowId: string) => {
    const keys: string[] = [];
    for await (const o of s.objectStore.store.list(`tenants/${s.tenantId}/profiles/${rowId}/`))
      keys.push(o.key);
    return keys;
  };
  const objects = () => (s.api as any).resources.objects.forTenant(s.tenantId);
  /** Waits until the profile's last claim has ended and its save at release has run. */
  const untilFree = (name: string, ms = 120_000) =>
    waitFor(async () => (await profileRow(name))?.liveClaimId === null, ms, 200);

  /** serveSite starts the test's web server inside the claim's desktop and waits for it. */
  async function serveSite(claimId: string) {
    const w = await call('POST', `/v1/claims/${claimId}/files/write`, {
      path: `${HOME}/site.py`,
      content: SITE,
    });
    expect(w.statusCode, w.body).toBe(200);
    await shell(claimId, `setsid python3 ${HOME}/site.py >/tmp/site.out 2>&1 </dev/null &`);
    await waitFor(
      async () =>
        (
          await shell(
            claimId,
            `python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${PORT}/ping')"`,
          )
        ).exit_code === 0,
      20_000,
      200,
    );
  }
  const titles = async (claimId: string): Promise<string[]> => {
    const res = await call('GET', `/v1/claims/${claimId}/windows`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().windows.map((w: { title: string }) => w.title);
  };

  beforeAll(async () => {
    s = await startStack();
    const pool = await call('PUT', '/v1/pools/prof', {
      image: 'local',
      autoscaling: { min: 0, initial: 3, max: 4 },
    });
    expect(pool.statusCode, pool.body).toBe(201);
    expect(pool.json().profile_paths).toBeNull();
    await waitFor(
      async () => (await call('GET', '/v1/pools/prof')).json().counts.warm >= 2,
      240_000,
      250,
    );
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  it('restores a Chromium login and a Document into the next claim of the profile', async () => {
    const first = await claim('cust-42');
    expect(first.statusCode, first.body).toBe(201);
    const a = first.json().id as string;
    // A first use starts empty.
    const fresh = await call('GET', '/v1/profiles/cust-42');
    expect(fresh.json()).toMatchObject({ id: 'cust-42', version: 0, claim_id: a, saved_at: null });
    const noNote = await call('POST', `/v1/claims/${a}/files/stat`, { path: NOTE });
    expect(noNote.statusCode).toBe(404);

    await serveSite(a);
    const launched = await call('POST', `/v1/claims/${a}/windows/launch`, {
      app: 'browser',
      url: `http://127.0.0.1:${PORT}/login`,
    });
    expect(launched.statusCode, launched.body).toBe(200);
    await waitFor(
      async () => (await titles(a)).some((t) => t.includes('Logged in as alice')),
      60_000,
      500,
    );
    const write = await call('POST', `/v1/claims/${a}/files/write`, {
      path: NOTE,
      content: `remember ${tag}`,
      create_parents: true,
    });
    expect(write.statusCode, write.body).toBe(200);

    const released = await call('DELETE', `/v1/claims/${a}`);
    expect(released.statusCode, released.body).toBe(200);
    await untilFree('cust-42');
    const saved = (await call('GET', '/v1/profiles/cust-42')).json();
    expect(saved).toMatchObject({ version: 1, claim_id: null, last_claim_id: a });
    expect(saved.size_bytes).toBeGreaterThan(0);
    // Chromium's cookie database is in the saved version.
    const row = (await profileRow('cust-42'))!;
    const manifest = JSON.parse(
      Buffer.from(await objects().get(`profiles/${row.id}/versions/00000001.json`)).toString(),
    );
    const paths = manifest.entries.map((e: { path: string }) => e.path);
    expect(paths).toContain('.cubicle/chromium/Default/Cookies');
    expect(paths).toContain('Documents/notes.txt');
    expect(paths.some((p: string) => p.includes('Singleton'))).toBe(false);

    const second = await claim('cust-42');
    expect(second.statusCode, second.body).toBe(201);
    const b = second.json().id as string;
    expect(b).not.toBe(a);
    expect(second.json().sandbox.id).not.toBe(first.json().sandbox.id);
    const note = await call('POST', `/v1/claims/${b}/files/read`, { path: NOTE });
    expect(note.statusCode, note.body).toBe(200);
    expect(note.json().content).toBe(`remember ${tag}`);

    await serveSite(b);
    const reopened = await call('POST', `/v1/claims/${b}/windows/launch`, {
      app: 'browser',
      url: `http://127.0.0.1:${PORT}/`,
    });
    expect(reopened.statusCode, reopened.body).toBe(200);
    await waitFor(
      async () => (await titles(b)).some((t) => t.includes('Logged in as alice')),
      60_000,
      500,
    );
    const log = await call('POST', `/v1/claims/${b}/files/read`, { path: '/tmp/site-cookies.log' });
    expect(log.json().content).toContain(`/ session=${SESSION}`);
    expect(log.json().content).not.toContain('/login');

    // Nothing of it is stored in plaintext.
    for (const key of await storedKeys(row.id)) {
      const body = Buffer.from(await s.objectStore.store.get(key)).toString('latin1');
      expect(body).not.toContain(`remember ${tag}`);
      expect(body).not.toContain(SESSION);
    }
    const other = await call('GET', '/v1/profiles/cust-42', undefined, s.other.auth);
    expect(other.statusCode).toBe(404);
    const rel = await call('DELETE', `/v1/claims/${b}`);
    expect(rel.statusCode).toBe(200);
    await untilFree('cust-42');
  }, 400_000);

  it('gives a profile to one of two concurrent claims (the other is 409 profile_in_use), and replays a retried claim', async () => {
    const [r1, r2] = await Promise.all([claim('race-1'), claim('race-1')]);
    const statuses = [r1.statusCode, r2.statusCode].sort();
    expect(statuses, `${r1.body} ${r2.body}`).toEqual([201, 409]);
    const loser = r1.statusCode === 409 ? r1 : r2;
    const winner = r1.statusCode === 201 ? r1 : r2;
    expect(loser.json().error.code).toBe('profile_in_use');
    expect((await profileRow('race-1'))?.liveClaimId).toBe(winner.json().id);
    // Held: a third claim is refused at once, and the profile cannot be deleted.
    expect((await claim('race-1')).statusCode).toBe(409);
    expect((await call('DELETE', '/v1/profiles/race-1')).statusCode).toBe(409);
    expect((await call('DELETE', `/v1/claims/${winner.json().id}`)).statusCode).toBe(200);
    await untilFree('race-1');

    // Idempotency: a retried claim with the same key and profile is the same claim.
    const key = { ...s.auth, 'idempotency-key': `prof-${tag}` };
    const once = await claim('race-1', key);
    expect(once.statusCode, once.body).toBe(201);
    const again = await claim('race-1', key);
    expect([200, 201]).toContain(again.statusCode);
    expect(again.json().id).toBe(once.json().id);
    expect((await call('DELETE', `/v1/claims/${once.json().id}`)).statusCode).toBe(200);
    await untilFree('race-1');
  }, 300_000);

  it('keeps the previous version whole when the worker is killed in the middle of a save', async () => {
    const taken = await claim('crash-1');
    expect(taken.statusCode, taken.body).toBe(201);
    const c = taken.json().id as string;
    await call('POST', `/v1/claims/${c}/files/write`, {
      path: `${HOME}/Documents/a.txt`,
      content: `version one ${tag}`,
      create_parents: true,
    });
    const save = await call('POST', `/v1/claims/${c}/profile/save`);
    expect(save.statusCode, save.body).toBe(200);
    expect(save.json().profile.version).toBe(1);
    expect(save.json().changed_files).toBe(1);
    // Incremental: saving again without a change uploads nothing.
    const same = await call('POST', `/v1/claims/${c}/profile/save`);
    expect(same.json()).toMatchObject({ changed_files: 0, uploaded_bytes: 0 });
    expect(same.json().profile.version).toBe(2);
    const row = (await profileRow('crash-1'))!;
    const v1Keys = new Set(await storedKeys(row.id));

    // 48 MB of new data: the save at release takes long enough to be cut in the middle.
    await shell(c, `head -c 48000000 /dev/urandom > ${HOME}/Documents/big.bin`);
    expect((await call('DELETE', `/v1/claims/${c}`)).statusCode).toBe(200);
    // The moment a chunk of the new file is stored (the save is under way), the worker dies.
    await waitFor(
      async () => (await storedKeys(row.id)).some((k) => k.includes('/blobs/') && !v1Keys.has(k)),
      60_000,
      10,
    );
    await s.worker.kill9();
    const after = (await profileRow('crash-1'))!;
    expect(after.version).toBe(2);
    expect(after.liveClaimId).toBe(c);
    // The current version is whole: its manifest and every chunk it names, each its own hash.
    const keys = await storedKeys(row.id);
    expect(keys.some((k) => k.endsWith('/versions/00000003.json'))).toBe(false);
    const manifest = JSON.parse(
      Buffer.from(await objects().get(`profiles/${row.id}/versions/00000002.json`)).toString(),
    );
    const files = manifest.entries.filter((e: { type: string }) => e.type === 'file');
    expect(files.map((f: { path: string }) => f.path)).toEqual(['Documents/a.txt']);
    for (const f of files)
      for (const h of f.chunks) {
        const body = Buffer.from(await objects().get(`profiles/${row.id}/blobs/${h}`));
        expect(createHash('sha256').update(body).digest('hex')).toBe(h);
      }

    // A new worker finishes the release (its destroy job is run again) and the profile is usable.
    await s.restartWorker({ crash: true });
    await untilFree('crash-1', 180_000);
    const next = await claim('crash-1');
    expect(next.statusCode, next.body).toBe(201);
    const d = next.json().id as string;
    const a = await call('POST', `/v1/claims/${d}/files/read`, { path: `${HOME}/Documents/a.txt` });
    expect(a.json().content).toBe(`version one ${tag}`);
    const version = (await profileRow('crash-1'))!.version;
    expect(version).toBeGreaterThanOrEqual(2);
    if (version === 3) {
      const big = await call('POST', `/v1/claims/${d}/files/stat`, {
        path: `${HOME}/Documents/big.bin`,
      });
      expect(big.json().size).toBe(48_000_000);
    }
    expect((await call('DELETE', `/v1/claims/${d}`)).statusCode).toBe(200);
    await untilFree('crash-1');
  }, 600_000);

  it("refuses a save over the tenant's profile_bytes quota and sweeps profiles past retention", async () => {
    const taken = await claim('quota-1');
    expect(taken.statusCode, taken.body).toBe(201);
    const q = taken.json().id as string;
    await call('POST', `/v1/claims/${q}/files/write`, {
      path: `${HOME}/Documents/big.txt`,
      content: 'x'.repeat(4096),
      create_parents: true,
    });
    await s.db.tenant.update({ where: { id: s.tenantId }, data: { maxProfileBytes: 1000n } });
    const refused = await call('POST', `/v1/claims/${q}/profile/save`);
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().error).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'profile_bytes', limit: 1000 },
    });
    expect((await profileRow('quota-1'))!.version).toBe(0);
    await s.db.tenant.update({
      where: { id: s.tenantId },
      data: { maxProfileBytes: 10n * 1024n ** 3n },
    });
    expect((await call('DELETE', `/v1/claims/${q}`)).statusCode).toBe(200);
    await untilFree('quota-1');

    // Retention: race-1 unused for longer than the tenant keeps profiles goes with its objects.
    const race = (await profileRow('race-1'))!;
    expect((await storedKeys(race.id)).length).toBeGreaterThan(0);
    await s.db.profile.update({
      where: { id: race.id },
      data: { lastUsedAt: new Date(Date.now() - 91 * 86_400_000) },
    });
    await waitFor(async () => (await profileRow('race-1')) === null, 60_000, 250);
    expect(await storedKeys(race.id)).toEqual([]);
  }, 200_000);

  it('lists profiles and deletes one with its objects', async () => {
    const list = await call('GET', '/v1/profiles');
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((p: { id: string }) => p.id)).toEqual([
      'crash-1',
      'cust-42',
      'quota-1',
    ]);
    const row = (await profileRow('crash-1'))!;
    expect((await storedKeys(row.id)).length).toBeGreaterThan(0);
    const del = await call('DELETE', '/v1/profiles/crash-1');
    expect(del.statusCode, del.body).toBe(204);
    expect(await storedKeys(row.id)).toEqual([]);
    expect((await call('GET', '/v1/profiles/crash-1')).statusCode).toBe(404);
    expect(await profileRow('crash-1')).toBeNull();
  }, 120_000);
});

// The same profile kept in the S3 back end (the harness's S3-compatible server): a Document saved
// at release is restored into the next claim, the bucket holds only ciphertext, delete empties it.
describe('persistent profiles on the S3 object store', () => {
  let s: Stack;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const profileRow = () =>
    s.db.profile.findUnique({
      where: { tenantId_name: { tenantId: s.tenantId, name: 'cust-s3' } },
    });
  const keysOf = async (rowId: string) => {
    const keys: string[] = [];
    for await (const o of s.objectStore.store.list(`tenants/${s.tenantId}/profiles/${rowId}/`))
      keys.push(o.key);
    return keys;
  };

  beforeAll(async () => {
    s = await startStack({ objectStore: 's3' });
    expect(s.objectStore.kind).toBe('s3');
    const pool = await call('PUT', '/v1/pools/prof', {
      image: 'local',
      autoscaling: { min: 0, initial: 2, max: 3 },
    });
    expect(pool.statusCode, pool.body).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/prof')).json().counts.warm >= 1,
      240_000,
      250,
    );
  }, 300_000);
  afterAll(async () => {
    await s?.close();
  });

  it('saves at release into the bucket and restores into the next claim', async () => {
    const first = await call('POST', '/v1/pools/prof/claims', {
      profile: 'cust-s3',
      wait_seconds: 120,
    });
    expect(first.statusCode, first.body).toBe(201);
    const a = first.json().id as string;
    const text = `kept in s3 ${tag}`;
    const w = await call('POST', `/v1/claims/${a}/files/write`, {
      path: NOTE,
      content: text,
      create_parents: true,
    });
    expect(w.statusCode, w.body).toBe(200);
    expect((await call('DELETE', `/v1/claims/${a}`)).statusCode).toBe(200);
    await waitFor(async () => (await profileRow())?.liveClaimId === null, 120_000, 200);
    const row = (await profileRow())!;
    expect(row.version).toBe(1);
    const keys = await keysOf(row.id);
    expect(keys.length).toBeGreaterThan(1);
    for (const key of keys)
      expect(Buffer.from(await s.objectStore.store.get(key)).toString('latin1')).not.toContain(
        text,
      );

    const second = await call('POST', '/v1/pools/prof/claims', {
      profile: 'cust-s3',
      wait_seconds: 120,
    });
    expect(second.statusCode, second.body).toBe(201);
    const b = second.json().id as string;
    const note = await call('POST', `/v1/claims/${b}/files/read`, { path: NOTE });
    expect(note.json().content).toBe(text);
    expect((await call('DELETE', `/v1/claims/${b}`)).statusCode).toBe(200);
    await waitFor(async () => (await profileRow())?.liveClaimId === null, 120_000, 200);
    expect((await call('DELETE', '/v1/profiles/cust-s3')).statusCode).toBe(204);
    expect(await keysOf(row.id)).toEqual([]);
  }, 400_000);
});
