import { readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cubicle, CubicleError, type ClaimHandle } from '../src/index.js';
import { startLiveStack, type LiveStack } from './live-stack.js';

// The computer-use tools against a real desktop: each committed transcript (written by hand from
// the vendors' docs, shared with the Python tests) is replayed through `claim.computerTool(...)`
// on a test app, and every step's effect is read back from the app through observe.
const fixtures = new URL('./fixtures/computer-use/', import.meta.url);
const APP = readFileSync(new URL('test-app.py', fixtures), 'utf8');
const APP_PATH = '/tmp/cu-test-app.py';

type Expect = {
  image?: { width: number; height: number; center_rgb?: [number, number, number] };
  text?: string;
  /** The input went through (Cubicle's effect is neither refused nor partial). */
  delivered?: boolean;
  error?: string;
  app?: Record<string, string | { min?: number; max?: number }>;
};
type Fixture = {
  max_dimension: number;
  version?: 'computer_20250124' | 'computer_20251124';
  definition: Record<string, unknown>;
  steps: { input: Record<string, unknown>; expect: Expect }[];
};
const load = (name: string) => JSON.parse(readFileSync(new URL(name, fixtures), 'utf8')) as Fixture;

let live: LiveStack;
let claim: ClaimHandle;
beforeAll(async () => {
  live = await startLiveStack();
  const cubicle = new Cubicle({ apiKey: live.apiKey, baseUrl: live.url });
  await cubicle.pools.apply('computer-use', {
    image: 'local',
    autoscaling: { min: 0, initial: 1, max: 1 },
  });
  claim = await cubicle.claims.create('computer-use', { ttl_seconds: 900, wait_seconds: 120 });
  await claim.files.write({ path: APP_PATH, content: APP });
}, 180_000);
afterAll(async () => {
  await claim?.release().catch(() => undefined);
  await live?.stop();
});

/** launchApp starts a fresh test app (closing the last one) and returns its window id. */
async function launchApp(): Promise<number> {
  for (const w of (await claim.windows.list()).windows)
    if (w.title === 'cu-test-app') await claim.windows.close({ window_id: w.window_id });
  const launched = await claim.windows.launch({
    argv: ['/usr/bin/python3', APP_PATH],
    wait_for_window_ms: 20_000,
  });
  if (launched.window_wait !== 'found') throw new Error('the test app opened no window');
  const windowId = launched.window.window_id;
  // The app is ready once its labels can be read.
  await appLabels(windowId, (labels) => labels.clicks === '-');
  return windowId;
}

/** appLabels observes the app until `until` holds of its "name: value" labels (up to 5 s). */
async function appLabels(
  windowId: number,
  until: (labels: Record<string, string>) => boolean,
): Promise<Record<string, string>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const seen = await claim.observe({ window_id: windowId, include_screenshot: false });
    const labels: Record<string, string> = {};
    for (const row of seen.elements) {
      const m = row.role === 'label' ? /^(\w+): (.*)$/s.exec(row.name ?? '') : null;
      if (m) labels[m[1]!] = m[2]!;
    }
    if (until(labels) || Date.now() > deadline) return labels;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const matches = (value: string | undefined, want: string | { min?: number; max?: number }) =>
  typeof want === 'string'
    ? value === want
    : value !== undefined &&
      Number(value) >= (want.min ?? -Infinity) &&
      Number(value) <= (want.max ?? Infinity);

function checkImage(base64: string, want: NonNullable<Expect['image']>) {
  const png = PNG.sync.read(Buffer.from(base64, 'base64'));
  expect({ width: png.width, height: png.height }).toEqual({
    width: want.width,
    height: want.height,
  });
  if (want.center_rgb) {
    const i = (Math.floor(png.height / 2) * png.width + Math.floor(png.width / 2)) * 4;
    expect([png.data[i], png.data[i + 1], png.data[i + 2]]).toEqual(want.center_rgb);
  }
}

/** expectApp asserts the app's labels reached what the step expects. */
async function expectApp(windowId: number, want: NonNullable<Expect['app']>, step: string) {
  const labels = await appLabels(windowId, (l) =>
    Object.entries(want).every(([k, v]) => matches(l[k], v)),
  );
  for (const [k, v] of Object.entries(want))
    expect(matches(labels[k], v), `${step}: label ${k} is "${labels[k]}"`).toBe(true);
}

/**
 * Delivered input is `confirmed` when the screen changed within the guest's short watch
 * (300 ms), else `unverifiable`; on a loaded machine a slow repaint can miss the watch, so a
 * step asserts delivery and reads the effect back from the app, and most steps must confirm.
 */
const DELIVERED = ['confirmed', 'unverifiable'];
function expectMostlyConfirmed(effects: string[]) {
  const confirmed = effects.filter((e) => e === 'confirmed').length;
  expect(confirmed, `effects: ${effects.join(', ')}`).toBeGreaterThan(effects.length / 2);
}

describe('computer-use tools on a real desktop', { timeout: 300_000 }, () => {
  it("replays Anthropic's computer tool transcript and every action has its effect", async () => {
    const fixture = load('anthropic.json');
    const windowId = await launchApp();
    const effects: string[] = [];
    const tool = await claim.computerTool('anthropic', {
      maxDimension: fixture.max_dimension,
      version: fixture.version!,
    });
    expect(tool.definition).toEqual(fixture.definition);
    for (const { input, expect: want } of fixture.steps) {
      const step = JSON.stringify(input);
      if (want.error) {
        const error = await tool.execute(input).catch((e: unknown) => e);
        expect(error, step).toBeInstanceOf(CubicleError);
        expect((error as CubicleError).code, step).toBe(want.error);
        continue;
      }
      const out = await tool.execute(input);
      expect(out.is_error, step).toBe(false);
      const images = out.content.filter((c) => c.type === 'image');
      const texts = out.content.filter((c) => c.type === 'text');
      if (want.image) checkImage(images[0]!.source.data, want.image);
      if (want.text)
        expect(
          texts.map((t) => t.text),
          step,
        ).toEqual([want.text]);
      if (want.delivered) {
        const effect = out.action_results.at(-1)!.effect;
        expect(DELIVERED, step).toContain(effect);
        effects.push(effect);
        // The model reads the same verdict, and sees the screen after the action.
        expect(texts[0]!.text, step).toContain(`delivered`);
        expect(texts[0]!.text, step).toContain(`(effect: ${effect})`);
        checkImage(images[0]!.source.data, {
          width: tool.definition.display_width_px,
          height: tool.definition.display_height_px,
        });
      }
      if (want.app) await expectApp(windowId, want.app, step);
    }
    expectMostlyConfirmed(effects);
  });

  it('replays OpenAI computer-use actions and every action has its effect', async () => {
    const fixture = load('openai.json');
    const windowId = await launchApp();
    const effects: string[] = [];
    const tool = await claim.computerTool('openai', { maxDimension: fixture.max_dimension });
    expect(tool.definition).toEqual(fixture.definition);
    for (const { input, expect: want } of fixture.steps) {
      const step = JSON.stringify(input);
      if (want.error) {
        const error = await tool.execute(input).catch((e: unknown) => e);
        expect(error, step).toBeInstanceOf(CubicleError);
        expect((error as CubicleError).code, step).toBe(want.error);
        continue;
      }
      const out = await tool.execute(input);
      expect(out.output.type).toBe('computer_screenshot');
      const data = out.output.image_url.replace(/^data:image\/png;base64,/, '');
      checkImage(data, want.image ?? { width: 1280, height: 800 });
      if (want.delivered) {
        expect(out.action_results.length, step).toBeGreaterThan(0);
        for (const r of out.action_results) expect(DELIVERED, step).toContain(r.effect);
        effects.push(...out.action_results.map((r) => r.effect));
      }
      if (want.app) await expectApp(windowId, want.app, step);
    }
    expectMostlyConfirmed(effects);
    // A batched computer_call runs its actions in order and answers with one output item.
    const batch = await tool.executeCall({
      call_id: 'call_1',
      actions: [
        { type: 'click', button: 'left', x: 140, y: 70 },
        { type: 'click', button: 'left', x: 140, y: 70 },
      ],
    });
    expect(batch.item).toMatchObject({ type: 'computer_call_output', call_id: 'call_1' });
    expect(batch.action_results.length).toBe(2);
    for (const r of batch.action_results) expect(DELIVERED).toContain(r.effect);
    await expectApp(windowId, { clicks: '3' }, 'batched clicks');
  });
});
