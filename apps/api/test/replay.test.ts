import { ClaimTimeline, ReplayLinkCreated, ViewerTicketCreated } from '@cubicle/contract/api';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewerFixture, WEB_URL, type ViewerFixture } from './viewer-fixture.js';

const SECRET = 'hunter2-replay-s3cr3t-value';

/**
 * A claim's timeline and its replay links through the real API (two replicas on one database):
 * the timeline's sources on one clock, redaction of a secret value that reached stored rows,
 * paging, tenant isolation, and links that read one claim until revoked or expired.
 */
describe('replay: timeline and links', () => {
  let f: ViewerFixture;
  let claimId: string;
  let otherClaimId: string;
  const call = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    authorization?: string,
    payload?: unknown,
  ) =>
    f.apps[1].inject({
      method,
      url,
      headers: authorization ? { authorization } : {},
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const mint = async (ttl_seconds?: number, id = claimId) => {
    const res = await call(
      'POST',
      `/v1/claims/${id}/replay-links`,
      f.a.member,
      ttl_seconds ? { ttl_seconds } : {},
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    return ReplayLinkCreated.parse(res.json());
  };
  const timeline = (auth: string, query = '', id = claimId) =>
    call('GET', `/v1/claims/${id}/recording/timeline${query}`, auth);

  beforeAll(async () => {
    f = await viewerFixture();
    claimId = await f.claim('127.0.0.1:9');
    otherClaimId = await f.claim('127.0.0.1:9');
    const added = await call('POST', `/v1/claims/${claimId}/secrets`, f.a.member, {
      name: 'REPLAY_TOKEN',
      value: SECRET,
    });
    expect(added.statusCode, added.body).toBe(201);
    // Rows as they would be if the value reached them before the claim held the secret (a value
    // typed, then stored as a secret): the timeline still never shows it.
    const claim = await f.db.claim.findUniqueOrThrow({ where: { id: claimId } });
    const at = (ms: number) => new Date(Date.now() - 60_000 + ms);
    await f.db.actionRecord.create({
      data: {
        id: newId('action_record'),
        tenantId: f.a.tenantId,
        claimId,
        sandboxId: claim.sandboxId!,
        operation: 'act.element',
        request: { action: 'set_value', element_token: 'e1', value: '[redacted]' },
        result: {
          effect: 'confirmed',
          route: 'accessibility',
          retry_safe: false,
          duration_ms: 9,
          delivery: { mode: 'background' },
          evidence: [
            { kind: 'value_readback', before: '', after: SECRET },
            {
              kind: 'a11y_event',
              event: 'object:text-changed',
              role: 'entry',
              name: 'Token',
              after_ms: 2,
            },
          ],
        },
        effect: 'confirmed',
        durationMs: 9,
        createdAt: at(1000),
      },
    });
    await f.db.claimPause.create({
      data: {
        id: 'pause-replay-1',
        tenantId: f.a.tenantId,
        poolId: claim.poolId,
        claimId,
        reason: 'idle',
        startedAt: at(4000),
        endedAt: at(5000),
        expiresBefore: claim.expiresAt,
      },
    });
    const runId = newId('run');
    await f.db.run.create({
      data: {
        id: runId,
        tenantId: f.a.tenantId,
        claimId,
        status: 'succeeded',
        argv: ['sh', '-c', 'echo "$REPLAY_TOKEN"'],
        timeoutSeconds: 60,
        exitCode: 0,
        createdAt: at(2000),
        startedAt: at(2000),
        finishedAt: at(3000),
        lastSeq: 2,
      },
    });
    await f.db.runEvent.createMany({
      data: [
        {
          tenantId: f.a.tenantId,
          runId,
          seq: 1,
          type: 'stdout',
          data: { text: `token ${SECRET}\n` },
          createdAt: at(2500),
        },
        {
          tenantId: f.a.tenantId,
          runId,
          seq: 2,
          type: 'stderr',
          data: { text: 'done\n' },
          createdAt: at(2600),
        },
      ],
    });
  });
  afterAll(async () => f?.close());

  it('puts the claim, its action, its run and its output on one clock, with no secret value', async () => {
    const res = await timeline(f.a.member);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(SECRET);
    const page = ClaimTimeline.parse(res.json());
    expect(page).toMatchObject({ claim_id: claimId, is_live: true, next_cursor: null });
    const kinds = page.data.map((e) => e.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['claim', 'action', 'run_started', 'run_output', 'run_ended']),
    );
    const action = page.data.find((e) => e.kind === 'action');
    expect(action).toMatchObject({
      effect: 'confirmed',
      action: 'set_value',
      element: { role: 'entry', name: 'Token' },
      evidence: [expect.stringContaining('[secret:REPLAY_TOKEN]'), expect.any(String)],
    });
    const steps = page.data.flatMap((e) => (e.kind === 'claim' ? [e.event] : []));
    expect(steps.sort()).toEqual(['activated', 'claimed', 'paused', 'resumed']);
    const out = page.data.find((e) => e.kind === 'run_output' && e.stream === 'stdout');
    expect(out).toMatchObject({ text: 'token [secret:REPLAY_TOKEN]\n' });
    // Oldest first; offsets are from the origin.
    const ats = page.data.map((e) => Date.parse(e.at));
    expect(ats).toEqual([...ats].sort((x, y) => x - y));
    for (const e of page.data) expect(e.offset_ms).toBe(Date.parse(e.at) - Date.parse(page.origin));
  });

  it('pages without repeats or gaps', async () => {
    const all = ClaimTimeline.parse((await timeline(f.a.member)).json()).data.map((e) => e.key);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await timeline(f.a.member, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode, res.body).toBe(200);
      const page = ClaimTimeline.parse(res.json());
      expect(page.data.length).toBeLessThanOrEqual(2);
      walked.push(...page.data.map((e) => e.key));
      cursor = page.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all);
    const bad = await timeline(f.a.member, '?cursor=bm9wZQ');
    expect([bad.statusCode, bad.json().error.code]).toEqual([400, 'validation_failed']);
  });

  it('another tenant gets 404 on the timeline and the links; nothing is minted or revoked', async () => {
    const link = await mint();
    for (const [method, url] of [
      ['GET', `/v1/claims/${claimId}/recording/timeline`],
      ['POST', `/v1/claims/${claimId}/replay-links`],
      ['GET', `/v1/claims/${claimId}/replay-links`],
      ['DELETE', `/v1/replay-links/${link.id}`],
    ] as const) {
      const res = await call(method, url, f.b.admin, method === 'POST' ? {} : undefined);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect(
      (await f.db.replayLink.findUniqueOrThrow({ where: { id: link.id } })).revokedAt,
    ).toBeNull();
  });

  it('mints a link whose token reads this claim only, read-only, and is never stored', async () => {
    const link = await mint();
    expect(link.replay_url).toBe(`${WEB_URL}/replay/${link.token}`);
    expect(link.embed_html).toContain(`src="${link.replay_url}"`);
    const row = await f.db.replayLink.findUniqueOrThrow({ where: { id: link.id } });
    expect(JSON.stringify(row)).not.toContain(link.token.split('.')[2]!);
    const list = await call('GET', `/v1/claims/${claimId}/replay-links`, f.a.admin);
    expect(list.json().data.map((x: { id: string }) => x.id)).toContain(link.id);
    expect(list.body).not.toContain(link.token);

    const bearer = `Bearer ${link.token}`;
    const read = await timeline(bearer);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.body).not.toContain(SECRET);
    // Another claim of the same tenant: not this link's business.
    expect((await timeline(bearer, '', otherClaimId)).statusCode).toBe(404);
    // Read-only: it is no API key anywhere else.
    expect((await call('GET', `/v1/claims/${claimId}/replay-links`, bearer)).statusCode).toBe(401);
    expect((await call('POST', `/v1/claims/${claimId}/replay-links`, bearer, {})).statusCode).toBe(
      401,
    );
    expect((await call('GET', `/v1/claims/${claimId}`, bearer)).statusCode).toBe(401);
    const info = await call('POST', '/v1/replay/introspect', undefined, { token: link.token });
    expect(info.json()).toMatchObject({ state: 'active', claim_id: claimId, embed_origins: [] });
  });

  it('a viewer ticket signed by the same keys is not a replay link', async () => {
    const res = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, f.a.member, {
      mode: 'view',
    });
    const ticket = ViewerTicketCreated.parse(res.json()).ticket;
    expect((await timeline(`Bearer ${ticket}`)).statusCode).toBe(401);
    const info = await call('POST', '/v1/replay/introspect', undefined, { token: ticket });
    expect([info.statusCode, info.json().error.code]).toEqual([401, 'invalid_ticket']);
  });

  it('a revoked link is refused at once, on every replica', async () => {
    const link = await mint();
    expect((await timeline(`Bearer ${link.token}`)).statusCode).toBe(200);
    const del = await f.apps[0].inject({
      method: 'DELETE',
      url: `/v1/replay-links/${link.id}`,
      headers: { authorization: f.a.admin },
    });
    expect(del.statusCode).toBe(204);
    const again = await f.apps[0].inject({
      method: 'DELETE',
      url: `/v1/replay-links/${link.id}`,
      headers: { authorization: f.a.admin },
    });
    expect(again.statusCode).toBe(204);
    const refused = await timeline(`Bearer ${link.token}`);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toMatchObject({
      code: 'unauthenticated',
      details: { state: 'revoked' },
    });
    const info = await call('POST', '/v1/replay/introspect', undefined, { token: link.token });
    expect(info.json().state).toBe('revoked');
  });

  it('an expired link is refused', async () => {
    const link = await mint(1);
    await new Promise((r) => setTimeout(r, 1100));
    const refused = await timeline(`Bearer ${link.token}`);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.details).toEqual({ state: 'expired' });
  });

  it('a link outlives its claim: the replay of an ended claim stays readable', async () => {
    const link = await mint(3600, otherClaimId);
    const rel = await call('DELETE', `/v1/claims/${otherClaimId}`, f.a.member);
    expect(rel.statusCode, rel.body).toBeLessThan(300);
    const res = await timeline(`Bearer ${link.token}`, '', otherClaimId);
    expect(res.statusCode, res.body).toBe(200);
    const page = ClaimTimeline.parse(res.json());
    expect(page.data.map((e) => (e.kind === 'claim' ? e.event : null))).toContain('released');
    expect(page.is_live).toBe(false);
  });
});
