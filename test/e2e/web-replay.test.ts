import { ClaimTimeline, Recording, ReplayLinkCreated } from '@cubicle/contract/api';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './support/stack.js';
import { saveArtifact } from './support/web.js';
import { encoderPidOf } from './support/video-frames.js';
import { launchWindow, startWebStack, type WebStack } from './support/web-stack.js';

const SECRET = 'replay-e2e-s3cr3t-4fj29x';
const VIDEO = '[data-testid=replay-video]';
/**
 * The encoder is stopped (SIGSTOP) this long (ms) between the first and second steps, as a
 * starved one is on a loaded machine: the recording names the span a gap without frames.
 */
const STALL_MS = 4_000;

// Browser-side code is passed as source text: the test package compiles without the DOM library.
const IN_VIDEO = (body: string) =>
  `(() => { const v = document.querySelector('${VIDEO}'); ${body} })()`;

interface VideoState {
  readyState: number;
  currentTime: number;
  width: number;
  height: number;
}

/** videoState reads what the page's <video> has decoded and where it is. */
const videoState = (page: Page) =>
  page.evaluate(
    IN_VIDEO(
      'return { readyState: v.readyState, currentTime: v.currentTime, width: v.videoWidth, height: v.videoHeight };',
    ),
  ) as Promise<VideoState>;
const play = (page: Page) => page.evaluate(IN_VIDEO('return v.play().then(() => true);'));
const pause = (page: Page) => page.evaluate(IN_VIDEO('v.pause(); return true;'));
const scrubTo = (page: Page, t: number) =>
  page.evaluate(IN_VIDEO(`v.currentTime = ${Number(t)}; return true;`));

/** firstFrame waits until the page's video has decoded a frame (HAVE_CURRENT_DATA or more). */
async function firstFrame(page: Page) {
  await page.locator(VIDEO).waitFor();
  await waitFor(async () => (await videoState(page)).readyState >= 2, 30_000, 100);
  return videoState(page);
}

/**
 * The replay page in real Chromium against the real stack: a recorded desktop (FFmpeg in the
 * sandbox, segments stored by the worker) driven through the API, the dashboard's replay page
 * playing its video beside its timeline (a step click seeks, scrubbing highlights the step), the
 * share link's page without a session (valid, then revoked, then expired), another tenant's 404s,
 * and no secret value in the timeline a run echoed it into.
 */
describe('replay page (/claims/{id}/replay, /replay/{token}) in Chromium', () => {
  let w: WebStack;
  let claimId: string;
  let page: Page;
  /** Where the stopped encoder's span lies on the video's axis (s from started_at). */
  let stall: [number, number] = [0, 0];
  const api = (method: string, url: string, payload?: unknown) => w.call(method, url, payload);
  const recording = async () =>
    Recording.parse((await api('GET', `/v1/claims/${claimId}/recording`)).json());
  const mint = async (ttl_seconds: number) => {
    const res = await api('POST', `/v1/claims/${claimId}/replay-links`, { ttl_seconds });
    expect(res.statusCode, res.body).toBe(201);
    return ReplayLinkCreated.parse(res.json());
  };

  const signIn = async (p: Page) => {
    await p.goto(`${w.web.url}/login`);
    await p.getByLabel('API key').fill(w.apiKey);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.waitForURL(`${w.web.url}/pools`);
  };

  beforeAll(async () => {
    w = await startWebStack();
    const put = await api('PUT', '/v1/pools/replay', {
      image: 'local',
      autoscaling: { min: 0, initial: 1, max: 2 },
      recording: { video: true, fps: 5, quality: 'low' },
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    await waitFor(
      async () => (await api('GET', '/v1/pools/replay')).json().counts.warm >= 1,
      120_000,
      250,
    );
    const claimed = await api('POST', '/v1/pools/replay/claims', { ttl_seconds: 900 });
    expect(claimed.statusCode, claimed.body).toBe(201);
    claimId = claimed.json().id;
    const secret = await api('POST', `/v1/claims/${claimId}/secrets`, {
      name: 'REPLAY_SECRET',
      value: SECRET,
    });
    expect(secret.statusCode, secret.body).toBe(201);
    const window = await launchWindow(w, claimId, 'Replay window');
    const sandboxId = (await api('GET', `/v1/claims/${claimId}`)).json().sandbox.id as string;
    let stoppedAt = 0;
    let resumedAt = 0;
    // A few steps a second or more apart, so each has its own place in the video.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1500));
      if (i === 1) {
        const encoder = encoderPidOf(sandboxId);
        stoppedAt = Date.now();
        process.kill(encoder, 'SIGSTOP');
        await new Promise((r) => setTimeout(r, STALL_MS));
        process.kill(encoder, 'SIGCONT');
        resumedAt = Date.now();
      }
      const shot = await api('POST', `/v1/claims/${claimId}/screenshot`, {
        window_id: window.window_id,
      });
      const click = await api('POST', `/v1/claims/${claimId}/input`, {
        action: 'click',
        window_id: window.window_id,
        screenshot_id: shot.json().screenshot_id,
        x: 40 + i * 60,
        y: 40,
      });
      expect(click.statusCode, click.body).toBe(200);
    }
    const run = await api('POST', `/v1/claims/${claimId}/runs`, {
      argv: ['/bin/sh', '-c', 'echo "token: $(cat "$CUBICLE_SECRETS_DIR/REPLAY_SECRET")"'],
    });
    expect(run.statusCode, run.body).toBe(202);
    await waitFor(
      async () => (await api('GET', `/v1/runs/${run.json().id}`)).json().finished_at !== null,
      60_000,
      250,
    );
    // The video covers the last step (segments of ~2 s arrive as they finish).
    const lastAction = Date.now();
    await waitFor(
      async () => {
        const r = await recording();
        return r.started_at !== null && Date.parse(r.started_at) + r.duration_ms > lastAction;
      },
      60_000,
      500,
    );
    const origin = Date.parse((await recording()).started_at!);
    stall = [(stoppedAt - origin) / 1000, (resumedAt - origin) / 1000];
    page = await w.browser.newPage();
    await signIn(page);
  });
  afterAll(async () => w?.close());

  it("has no secret value in the timeline a run echoed it into; another tenant's recording is 404", async () => {
    const res = await api('GET', `/v1/claims/${claimId}/recording/timeline`);
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(SECRET);
    const timeline = ClaimTimeline.parse(res.json());
    const output = timeline.data.filter((e) => e.kind === 'run_output');
    expect(output.map((e) => e.text).join('')).toContain('token: [secret:REPLAY_SECRET]');
    expect(timeline.data.filter((e) => e.kind === 'action')).toHaveLength(3);
    expect(timeline.origin).toBe((await recording()).started_at);
    for (const url of ['recording', 'recording/media', 'recording/timeline']) {
      const other = await w.s.api.inject({
        method: 'GET',
        url: `/v1/claims/${claimId}/${url}`,
        headers: w.s.other.auth,
      });
      expect(other.statusCode, url).toBe(404);
    }
  });

  it('plays the recording so far; a step click seeks there; scrubbing highlights the step', async () => {
    await page.goto(`${w.web.url}/claims/${claimId}/replay`);
    const first = await firstFrame(page);
    expect([first.width, first.height]).toEqual([1280, 800]);
    const firstFrameMs = Number(
      await page.evaluate('document.documentElement.dataset.replayFirstFrameMs'),
    );
    expect(firstFrameMs).toBeGreaterThan(0);
    // A figure to read, not a bound (benchmarks: scripts/bench/lib/replay-first-frame.mjs).
    console.info(`replay page: first decoded frame ${firstFrameMs.toFixed(0)} ms after navigation`);
    // Plays: the media clock advances.
    await play(page);
    await waitFor(async () => (await videoState(page)).currentTime > 1, 20_000, 100);
    await pause(page);

    // A step click seeks the video to the step's place.
    const steps = page.locator('[data-testid=replay-steps] button[data-kind=action]');
    expect(await steps.count()).toBe(3);
    const second = steps.nth(1);
    const at = Number(await second.getAttribute('data-seconds'));
    expect(at).toBeGreaterThan(0);
    await second.click();
    await waitFor(
      async () => Math.abs((await videoState(page)).currentTime - at) < 0.3,
      10_000,
      50,
    );
    const detail = page.locator('[data-testid=step-detail]');
    expect(await detail.getAttribute('data-key')).toBe(await second.getAttribute('data-key'));
    expect(await detail.textContent()).toMatch(
      /Effect\s*(confirmed|unverifiable|partial|suspected_noop|refused)/,
    );
    expect(await second.getAttribute('data-current')).toBe('true');
    await waitFor(
      async () =>
        (await detail.locator('canvas[data-frame=after]').getAttribute('data-state')) === 'drawn',
      20_000,
      100,
    );

    // Scrubbing to the third step's place highlights it.
    const third = steps.nth(2);
    const thirdAt = Number(await third.getAttribute('data-seconds'));
    // Inside its place, before whatever entry follows it (the run started 69 ms after this click
    // once clicks answered at their evidence).
    const nextAt = Math.min(
      ...(
        await page
          .locator('[data-testid=replay-steps] button')
          .evaluateAll((bs) => bs.map((b) => Number(b.getAttribute('data-seconds'))))
      ).filter((t) => t > thirdAt),
    );
    // (The page counts an entry current from 50 ms before its time: currentIndex.)
    await scrubTo(page, Math.min(thirdAt + 0.1, nextAt - 0.06));
    await waitFor(async () => (await third.getAttribute('data-current')) === 'true', 10_000, 50);
    expect(await second.getAttribute('data-current')).toBeNull();
    await saveArtifact(page, 'replay-dashboard');
  });

  it('names the spans without frames: a gap in the list seeks there, and the page says no frames are shown', async () => {
    await page.goto(`${w.web.url}/claims/${claimId}/replay`);
    await firstFrame(page);
    // The stopped encoder's span is a gap of the recording (e2e recording checks how it is found).
    const gap = (await recording()).gaps.find(
      (g) =>
        g.reason === 'no_frames' &&
        g.start_ms / 1000 <= stall[0] + 0.5 &&
        g.end_ms / 1000 >= stall[1] - 0.5,
    );
    expect(gap, JSON.stringify({ stall, gaps: (await recording()).gaps })).toBeDefined();
    const listed = page.locator(
      `[data-testid=replay-gaps] button[data-start-ms="${gap!.start_ms}"]`,
    );
    expect(await listed.getAttribute('data-reason')).toBe('no_frames');
    expect(await listed.getAttribute('data-end-ms')).toBe(String(gap!.end_ms));
    const now = page.locator('[data-testid=replay-gap-now]');
    expect(await now.count()).toBe(0);
    // A click on the gap seeks the video to its start; inside it, the page says no frames are shown.
    await listed.click();
    await waitFor(
      async () => Math.abs((await videoState(page)).currentTime - gap!.start_ms / 1000) < 0.3,
      10_000,
      50,
    );
    await now.waitFor({ timeout: 10_000 });
    expect(await now.textContent()).toContain('No frames here');
    // Out of the gap (the last step's place, after it), the notice goes.
    const steps = page.locator('[data-testid=replay-steps] button[data-kind=action]');
    await steps.nth(2).click();
    await waitFor(async () => (await now.count()) === 0, 10_000, 50);
    await saveArtifact(page, 'replay-gaps');
  });

  it('a share link plays without a session while valid, and is refused once revoked or expired', async () => {
    const link = await mint(600);
    // No dashboard session: the link alone opens the page.
    await w.browser.context.clearCookies();
    const shared = await w.browser.newPage();
    try {
      const response = await shared.goto(link.replay_url.replace(/^https?:\/\/[^/]+/, w.web.url));
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toBe("frame-ancestors 'self'");
      expect(response?.headers()['referrer-policy']).toBe('no-referrer');
      expect(await w.browser.context.cookies(w.web.url)).toHaveLength(0);
      const frame = await firstFrame(shared);
      expect(frame.width).toBe(1280);
      expect(
        await shared.locator('[data-testid=replay-steps] button[data-kind=action]').count(),
      ).toBe(3);
      expect(await shared.content()).not.toContain(SECRET);
      await saveArtifact(shared, 'replay-shared');
      const media = (token: string) =>
        fetch(`${w.web.url}/replay/${token}/media`, { headers: { range: 'bytes=0-99' } });
      expect((await media(link.token)).status).toBe(206);

      const del = await api('DELETE', `/v1/replay-links/${link.id}`);
      expect(del.statusCode).toBe(204);
      expect((await media(link.token)).status).toBe(401);
      const direct = await w.s.api.inject({
        method: 'GET',
        url: `/v1/claims/${claimId}/recording/media`,
        headers: { authorization: `Bearer ${link.token}` },
      });
      expect(direct.statusCode).toBe(401);
      await shared.reload();
      expect(await shared.locator('main').getAttribute('data-state')).toBe('revoked');

      const short = await mint(2);
      expect((await media(short.token)).status).toBe(206);
      await new Promise((r) => setTimeout(r, 2500));
      expect((await media(short.token)).status).toBe(401);
      await shared.goto(`${w.web.url}/replay/${short.token}`);
      expect(await shared.locator('main').getAttribute('data-state')).toBe('expired');
    } finally {
      await shared.close();
    }
  });

  it('replays an ended claim whole', async () => {
    expect((await api('DELETE', `/v1/claims/${claimId}`)).statusCode).toBeLessThan(300);
    await waitFor(async () => (await recording()).state === 'finished', 60_000, 500);
    await signIn(page);
    await page.goto(`${w.web.url}/claims/${claimId}/replay`);
    await firstFrame(page);
    const kinds = await page
      .locator('[data-testid=replay-steps] button')
      .evaluateAll((bs) => bs.map((b) => b.textContent ?? ''));
    expect(kinds.some((t) => t.includes('claim released'))).toBe(true);
    await play(page);
    await waitFor(async () => (await videoState(page)).currentTime > 0.5, 20_000, 100);
  });
});
