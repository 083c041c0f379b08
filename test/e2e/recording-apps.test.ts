/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the API validates them against the contract. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaimTimeline, Recording } from '@cubicle/contract/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';
import {
  decodeErrors,
  encoderPidOf,
  frameTimes,
  framesByIndex,
  grayImage,
  probe,
  unnamedHoles,
} from './support/video-frames.js';

const HOME = '/home/sandbox';
// A local sandbox has its own network namespace with only its own loopback: the test's page
// server runs there, started through the claim's shell.
const PORT = 18_767;
const PAGE_TITLE = 'Recorded script';
const HEADLINE = 'Quarterly numbers typed by the agent';
const MINUTES =
  'Minutes of the recorded session: the browser form was filled and painted, then this paragraph was typed into Writer by its element token, while the desktop was recorded for replay.';

// Big effects on purpose: 40 px text typed into the field, then the whole page painted blue.
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>${PAGE_TITLE}</title><style>
body { margin: 0; background: #f2f2f2; color: #111; font: 28px sans-serif; }
main { padding: 24px; }
input { font: 40px sans-serif; width: 1000px; }
button { font: 40px sans-serif; padding: 12px 32px; margin-top: 24px; }
body.painted { background: #1f5fd0; color: #fff; }
</style></head><body><main>
<label>Headline <input id="headline" aria-label="Headline"></label>
<div><button onclick="document.body.className='painted';document.getElementById('state').textContent='Painted';document.title='Painted'">Paint</button></div>
<p id="state" role="status">Not painted</p>
</main></body></html>`;

/**
 * How much newer (s) than its time a frame's content may be. The guest puts every frame at the
 * time x11grab stamped it, taken just before the grab (fmp4-retime.ts): a frame never shows the
 * screen from before its time, but a starved encoder may grab a moment after stamping (on a
 * private Xvfb beside 6 busy loops, 0-56 ms; scripts/bench/recording-clock.mjs). Before that fix
 * FFmpeg's muxer moved frames after a hole by seconds, and 3 runs in 8 at load 25-32 saw every
 * effect 1-2.2 s late.
 */
const CLOCK_S = 0.5;
/** The screen stays still this long (ms) after each step, so the video has frames of it. */
const SETTLE_MS = 1_500;
/**
 * The encoder is stopped (SIGSTOP) this long (ms) just before the paint step, as a starved one is
 * on a loaded machine: FFmpeg's muxer moved the frames after such a hole by seconds (the paint
 * showed before it was sent), and grabbed every missed frame at once after it.
 */
const STALL_MS = 4_000;
/** A span without frames longer than this (s) is a hole in the video (a starved encoder). */
const HOLE_S = 1;

/** Frames and screenshots are compared at half size, as grey bytes. */
const W = 640;
const H = 400;
/** A pixel took part in a step's effect when its grey level moved at least this much. */
const CHANGED = 40;

interface Step {
  name: string;
  /** The operation's `action` as the timeline shows it. */
  action: string;
  /** The ActionResult's effect. */
  effect: string;
  /** Wall-clock ms just before the step was sent. */
  sentAt: number;
  /** Wall-clock ms when a screenshot showing the step's effect had been taken. */
  shownAt: number;
  before: Buffer;
  after: Buffer;
}

/** changedPixels are the indices where a step's before and after screenshots differ plainly. */
function changedPixels(before: Buffer, after: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < before.length; i++)
    if (Math.abs(after[i]! - before[i]!) >= CHANGED) out.push(i);
  return out;
}

/**
 * afterLikeness is the share of a step's changed pixels at which `frame` is nearer the after
 * screenshot than the before one: ~1 when the frame shows the effect, ~0 when it does not. Only
 * the changed pixels count, so a small effect (a line of text) is not drowned by the rest of the
 * screen, and the encoder's loss, the drawn pointer or a blinking caret move it a little at most.
 */
function afterLikeness(frame: Buffer, step: Step, changed: number[]): number {
  let nearer = 0;
  for (const i of changed)
    if (Math.abs(frame[i]! - step.after[i]!) < Math.abs(frame[i]! - step.before[i]!)) nearer++;
  return nearer / changed.length;
}

/**
 * A claim records while a known script drives Chromium (a page from the sandbox's own loopback
 * server: text typed into a field, a button that paints the page) and LibreOffice Writer (a
 * paragraph typed by its token). The stored video decodes, its length is the recorded span and
 * its frames about fps × length; at each step's place on the timeline the video shows that step's
 * effect, and just before the step was sent it does not. (Encoder and worker kill -9, another
 * tenant's 404 and retention are recording.test.ts's, on a GTK app.)
 */
describe('recording a scripted browser and LibreOffice session', () => {
  let s: Stack;
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-recording-apps-e2e-'));
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const ok = async (method: string, url: string, payload?: unknown) => {
    const res = await call(method, url, payload);
    // A server error says what the worker logged last (its guest calls run there).
    const logged = res.statusCode >= 500 ? `; worker: ${s.worker.output().slice(-3000)}` : '';
    expect(res.statusCode, `${method} ${url}: ${res.body}${logged}`).toBeLessThan(300);
    return res.json();
  };

  beforeAll(async () => {
    s = await startStack();
    const pool = await call('PUT', '/v1/pools/apps', {
      image: 'local',
      autoscaling: { min: 0, initial: 1, max: 1 },
      recording: { video: true, fps: 5, quality: 'medium' },
    });
    expect(pool.statusCode, pool.body).toBe(201);
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('at each step of the script the video shows its effect; the video decodes and spans the recording', async () => {
    await waitFor(
      async () => (await call('GET', '/v1/pools/apps')).json().counts.warm >= 1,
      120_000,
      250,
    );
    const claimId = (await ok('POST', '/v1/pools/apps/claims', { ttl_seconds: 900 })).id as string;
    const recording = async () =>
      Recording.parse(await ok('GET', `/v1/claims/${claimId}/recording`));
    const screen = async (name: string) => {
      const res = await call('GET', `/v1/claims/${claimId}/screenshot`);
      expect(res.statusCode).toBe(200);
      const file = join(dir, `${name}.png`);
      writeFileSync(file, res.rawPayload);
      return grayImage(file, W, H);
    };
    /**
     * tokensOf waits until one observe of the window has every element asked for (apps fill their
     * trees late) and answers their tokens: a newer observe makes older tokens stale.
     */
    const tokensOf = async (
      windowId: number,
      matches: ((r: { role: string; name?: string }) => boolean)[],
      extra: object = {},
      timeoutMs = 60_000,
    ) => {
      let found: ({ element_token: string } | undefined)[] = [];
      let seen: { role: string; name?: string }[] = [];
      // An observe that fails on the server side is asked again until the bound: a busy app
      // (LibreOffice at load ~40-50 once answered 500) is not what this test checks; the last
      // such answer is in the message when nothing else came.
      let failed = '';
      await waitFor(
        async () => {
          const res = await call('POST', `/v1/claims/${claimId}/observe`, {
            window_id: windowId,
            include_screenshot: false,
            ...extra,
          });
          if (res.statusCode >= 500) {
            failed = `${res.statusCode} ${res.body}; worker: ${s.worker.output().slice(-1500)}`;
            return false;
          }
          expect(res.statusCode, res.body).toBe(200);
          const rows = res.json().elements as {
            element_token: string;
            role: string;
            name?: string;
          }[];
          seen = rows;
          found = matches.map((m) => rows.find(m));
          return found.every((r) => r !== undefined);
        },
        timeoutMs,
        500,
      ).catch(async (err: Error) => {
        // What the window showed instead, and which windows there were.
        const shown = seen.slice(0, 30).map((r) => `${r.role}:${r.name ?? ''}`);
        const listed = (await listWindows()).map((w) => `${w.window_id}:${w.title}`);
        throw new Error(
          `${err.message}: window ${windowId} had ${seen.length} rows ${JSON.stringify(shown)}; windows ${JSON.stringify(listed)}${failed ? `; last server error: ${failed}` : ''}`,
        );
      });
      return found.map((r) => r!.element_token);
    };
    const listWindows = async () =>
      (await ok('GET', `/v1/claims/${claimId}/windows`)).windows as {
        window_id: number;
        title: string;
      }[];
    /**
     * launchWindow launches an app and answers its window. A 504 `timeout` ("the worker running
     * the call stopped; it may have been delivered") is answered as the API asks: look before
     * retrying. Once at load ~35 the worker running Chromium's launch stopped and the test
     * failed on it, though the launch may well have happened.
     */
    const launchWindow = async (
      request: object,
      isIt: (w: { window_id: number; title: string }) => boolean,
    ): Promise<number> => {
      for (let attempt = 1; ; attempt++) {
        const res = await call('POST', `/v1/claims/${claimId}/windows/launch`, request);
        if (res.statusCode === 200) {
          expect(res.json().window_wait, res.body).toBe('found');
          return res.json().window.window_id as number;
        }
        expect(res.statusCode, res.body).toBe(504);
        expect(attempt, res.body).toBeLessThan(3);
        let found = 0;
        await waitFor(
          async () => {
            found = (await listWindows()).find(isIt)?.window_id ?? 0;
            return found !== 0;
          },
          60_000,
          500,
        ).catch(() => undefined);
        if (found) return found;
      }
    };
    const steps: Step[] = [];
    /**
     * step runs one scripted call between two screenshots: the before one, and the first after it
     * whose changed pixels show an effect (an app may paint a moment after it answers).
     */
    const step = async (name: string, action: string, run: () => Promise<any>) => {
      const before = await screen(`${name}-before`);
      const sentAt = Date.now();
      const result = await run();
      expect(result.effect, `${name}: ${JSON.stringify(result)}`).not.toBe('refused');
      let after = before;
      await waitFor(
        async () => {
          after = await screen(`${name}-after`);
          return changedPixels(before, after).length >= 200;
        },
        10_000,
        200,
      );
      steps.push({
        name,
        action,
        effect: result.effect,
        sentAt,
        shownAt: Date.now(),
        before,
        after,
      });
      // Not a timing assertion: the still screen after the effect gives the video frames to
      // compare, before the next step changes it.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      return result;
    };

    // The page server, in the sandbox.
    await ok('POST', `/v1/claims/${claimId}/files/write`, {
      path: `${HOME}/site/index.html`,
      content: PAGE,
      create_parents: true,
    });
    await ok('POST', `/v1/claims/${claimId}/shell`, {
      command: `setsid python3 -m http.server ${PORT} --bind 127.0.0.1 --directory ${HOME}/site >/tmp/site.out 2>&1 </dev/null &`,
    });
    await waitFor(
      async () =>
        (
          await ok('POST', `/v1/claims/${claimId}/shell`, {
            command: `python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${PORT}/')"`,
          })
        ).exit_code === 0,
      20_000,
      200,
    );

    // Chromium: type the headline, then paint the page.
    const browserWindow = await launchWindow(
      { app: 'browser', url: `http://127.0.0.1:${PORT}/`, wait_for_window_ms: 60_000 },
      (w) => /Chrom/i.test(w.title) || w.title.includes(PAGE_TITLE),
    );
    // Chromium fills its tree late on a loaded machine (once not within 60 s beside another
    // e2e file).
    const [headline, paint] = await tokensOf(
      browserWindow,
      [
        (r) => r.role === 'entry' && r.name === 'Headline',
        (r) => r.role === 'push_button' && r.name === 'Paint',
      ],
      {},
      120_000,
    );
    // Whether every character arrived is the driver's web typing (desktop-browser.test.ts); here
    // the typing is a step with a visible effect, whatever its read-back says.
    await step('browser-type', 'set_value', () =>
      ok('POST', `/v1/claims/${claimId}/act`, {
        window_id: browserWindow,
        element_token: headline,
        action: 'set_value',
        value: HEADLINE,
      }),
    );
    // A starved encoder, made on purpose: a hole in the video right before the paint step.
    const sandboxId = (await ok('GET', `/v1/claims/${claimId}`)).sandbox.id as string;
    const encoderPid = encoderPidOf(sandboxId);
    const stoppedAt = Date.now();
    process.kill(encoderPid, 'SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    process.kill(encoderPid, 'SIGCONT');
    const resumedAt = Date.now();
    await step('browser-paint', 'click', () =>
      ok('POST', `/v1/claims/${claimId}/act`, {
        window_id: browserWindow,
        element_token: paint,
        action: 'click',
      }),
    );

    // LibreOffice Writer: a paragraph typed by its token.
    await launchWindow({ app: 'office.writer', wait_for_window_ms: 120_000 }, (w) =>
      /LibreOffice/.test(w.title),
    );
    // The document's window (the launch may have found an earlier one of LibreOffice's).
    let writerWindow = 0;
    await waitFor(
      async () => {
        writerWindow =
          (await listWindows()).find((w) => /LibreOffice Writer/.test(w.title))?.window_id ?? 0;
        return writerWindow !== 0;
      },
      60_000,
      500,
    );
    const [paragraph] = await tokensOf(
      writerWindow,
      [(r) => r.role === 'paragraph'],
      { roles: ['paragraph'] },
      120_000,
    );
    const minutes = await step('writer-type', 'type_text', () =>
      ok('POST', `/v1/claims/${claimId}/act`, {
        window_id: writerWindow,
        element_token: paragraph,
        action: 'type_text',
        text: MINUTES,
      }),
    );
    expect(minutes.effect, JSON.stringify(minutes)).toBe('confirmed');

    // The video covers the last step before the claim ends (a starved encoder and puller at load
    // ~30 on 2 cores once needed more than 30 s; the figures say how long it took).
    const lastAt = Date.now();
    let covering: Awaited<ReturnType<typeof recording>> | null = null;
    await waitFor(
      async () => {
        covering = await recording();
        return (
          covering.started_at !== null &&
          Date.parse(covering.started_at) + covering.duration_ms > lastAt + 1000
        );
      },
      120_000,
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(covering)}`);
    });
    const coveredAfterS = (Date.now() - lastAt) / 1000;
    await ok('DELETE', `/v1/claims/${claimId}`);
    await waitFor(async () => (await recording()).state === 'finished', 60_000, 250);
    const done = await recording();
    const origin = Date.parse(done.started_at!);

    const media = await call('GET', `/v1/claims/${claimId}/recording/media`);
    expect(media.statusCode).toBe(200);
    const file = join(dir, 'apps.mp4');
    writeFileSync(file, media.rawPayload);
    expect(media.rawPayload.length).toBe(done.size_bytes);
    expect(decodeErrors(file)).toBe('');
    const { duration, frames } = probe(file);
    const span = (Date.parse(done.ended_at!) - origin) / 1000;
    expect(Math.abs(duration - span)).toBeLessThanOrEqual(1);
    // Frames keep their capture times: a starved encoder (beside Chromium and LibreOffice on a
    // loaded machine) stores fewer frames than fps × duration (holes, named below), never more.
    expect(frames).toBeLessThanOrEqual(Math.ceil(done.fps * duration * 1.05));

    // Each step's place on the timeline, in the video.
    const timeline = ClaimTimeline.parse(
      await ok('GET', `/v1/claims/${claimId}/recording/timeline?limit=1000`),
    );
    expect(timeline.origin).toBe(done.started_at);
    const actions = timeline.data.filter((e) => e.kind === 'action');
    expect(actions.map((a) => a.action)).toEqual(steps.map((x) => x.action));
    expect(timeline.data.filter((e) => e.kind === 'window').length).toBe(2);

    // On the video's axis: when the test sent each step, the step's place on the timeline, and
    // when a screenshot had shown its effect.
    const times = frameTimes(file);
    expect(times.length).toBe(frames);
    const places = steps.map((x, i) => ({
      sent: (x.sentAt - origin) / 1000,
      at: actions[i]!.offset_ms / 1000,
      shown: (x.shownAt - origin) / 1000,
    }));
    // The holes: spans without frames, where the video cannot say what the screen showed.
    const holes = times.flatMap((t, n) =>
      n > 0 && t - times[n - 1]! > HOLE_S ? [[times[n - 1]!, t] as const] : [],
    );
    // The frames from the previous step's shown effect to the next step's sending: before the
    // one, the screen is this step's "before"; after the other, the next step changes it.
    const windows = places.map((p, i) => {
      const from = Math.max(i > 0 ? places[i - 1]!.shown : 0, p.sent - 10);
      const to = places[i + 1]?.sent ?? Infinity;
      return times.flatMap((t, n) => (t >= from && t < to ? [n] : []));
    });
    const decoded = framesByIndex(file, windows.flat(), W, H);
    let next = 0;
    const figures = steps.map((x, i) => {
      const p = places[i]!;
      const changed = changedPixels(x.before, x.after);
      const seen = windows[i]!.map((n) => ({
        t: times[n]!,
        like: Number(afterLikeness(decoded[next++]!, x, changed).toFixed(3)),
      }));
      return {
        step: x.name,
        effect: x.effect,
        ...p,
        changed_px: changed.length,
        /** The last frame surely captured before the step was sent. */
        before: seen.findLast((f) => f.t < p.sent - CLOCK_S) ?? null,
        /** The first frame captured at or after the step's place. */
        at_place: seen.find((f) => f.t >= p.at) ?? null,
        /** The first frame captured after a screenshot had shown the effect. */
        after: seen.find((f) => f.t >= p.shown) ?? null,
        /** The first frame after the step was sent that shows its effect. */
        effect_seen: seen.find((f) => f.t >= p.sent && f.like >= 0.8)?.t ?? null,
        seen,
      };
    });
    console.info(
      'recording-apps figures',
      JSON.stringify({
        duration,
        span,
        frames,
        fps: done.fps,
        // Where each segment sits (ms): a gap or a push shows as a jump between end and start.
        segments: done.segments.map((x) => [x.offset_ms, x.duration_ms]),
        holes,
        gaps: done.gaps.map((g) => [g.start_ms / 1000, g.end_ms / 1000, g.reason]),
        covered_after_s: coveredAfterS,
        stall: [(stoppedAt - origin) / 1000, (resumedAt - origin) / 1000],
        steps: figures.map(({ seen: _, ...f }) => f),
      }),
    );
    // The stall is a hole in the video, where it happened: no frame claims to show that span.
    const stall = [(stoppedAt - origin) / 1000, (resumedAt - origin) / 1000] as const;
    expect(
      holes.some(([a, b]) => a <= stall[0] + 0.5 && b >= stall[1] - 0.5),
      JSON.stringify({ stall, holes }),
    ).toBe(true);
    // ...and the recording and the timeline name it (and every other hole of over 1.2 s in the
    // decoded video) as a span without frames: from a frame interval after the last frame before
    // it, to the next frame.
    expect(timeline.gaps).toEqual(done.gaps);
    expect(
      done.gaps.some(
        (g) =>
          g.reason === 'no_frames' &&
          g.start_ms / 1000 <= stall[0] + 0.5 &&
          g.end_ms / 1000 >= stall[1] - 0.5,
      ),
      JSON.stringify({ stall, gaps: done.gaps }),
    ).toBe(true);
    expect(unnamedHoles(times, done.gaps, done.fps), JSON.stringify(done.gaps)).toEqual([]);
    let checked = 0;
    for (const f of figures) {
      const why = JSON.stringify(f);
      // The timeline's clock is the test's: the step sits between its sending and its effect.
      expect(f.sent, why).toBeLessThanOrEqual(f.at);
      expect(f.at, why).toBeLessThanOrEqual(f.shown);
      // Every frame is at its capture time, so a frame captured before the step was sent shows
      // the screen as it was, and one captured after a screenshot showed the effect shows it
      // too. Only where a hole in the video leaves no such frame (the encoder starved for the
      // whole span) is there nothing to compare, and the figures say so.
      if (f.before) expect(f.before.like, why).toBeLessThanOrEqual(0.2);
      if (f.after) expect(f.after.like, why).toBeGreaterThanOrEqual(0.8);
      if (f.before && f.after) checked++;
    }
    // A hole may hide one step, never the whole script (a 3-s step span at 5 fps is 15 frames).
    expect(checked, JSON.stringify(holes)).toBeGreaterThanOrEqual(figures.length - 1);
    // Two apps start and are driven on a loaded 2-core machine: more than the e2e default.
  }, 420_000);
});
