import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

// A GTK window with one check box: clicking it changes its `checked` state, which the driver
// reads back, so the click is `confirmed` (Debian's python3 has gi; the one on PATH may not).
const CHECK_WINDOW = [
  '/usr/bin/python3',
  '-c',
  "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; w=Gtk.Window(title='ttfca-e2e'); w.set_default_size(240,120); w.add(Gtk.CheckButton(label='Agree')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
];

const HISTOGRAM = 'cubicle_time_to_first_confirmed_action_seconds';

/**
 * Time to first confirmed action on a real desktop: REST → Redis → worker → guest driver → the
 * click's ActionResult stored with the claim, which stamps the claim once; the claim's answer,
 * the API's /metrics histogram and the pool's insights show it.
 */
describe('time to first confirmed action on a real desktop', () => {
  let s: Stack;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const histogramCount = async () => {
    // The API's fastify augmentation (app.metrics) is not visible from test/: read it by shape.
    const app = s.api as unknown as { metrics: { registry: { metrics(): Promise<string> } } };
    const text = await app.metrics.registry.metrics();
    return Number(new RegExp(`^${HISTOGRAM}_count (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  };

  beforeAll(async () => {
    s = await startStack();
    expect(
      (
        await call('PUT', '/v1/pools/ttfca', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 1 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/ttfca')).json().counts.warm === 1,
      120_000,
      250,
    );
  });
  afterAll(async () => s?.close());

  it('a confirmed click sets it once; the claim, /metrics and the insights show it', async () => {
    const created = await call('POST', '/v1/pools/ttfca/claims', { ttl_seconds: 600 });
    expect(created.statusCode).toBe(201);
    const claimId = created.json().id as string;
    const started = Date.now();
    expect(created.json().time_to_first_confirmed_action_ms).toBeNull();
    expect(await histogramCount()).toBe(0);

    const launched = await call('POST', `/v1/claims/${claimId}/windows/launch`, {
      argv: CHECK_WINDOW,
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode).toBe(200);
    const windowId = launched.json().window.window_id as number;
    await call('POST', `/v1/claims/${claimId}/verify`, {
      window_id: windowId,
      predicates: [{ kind: 'element_exists', selector: { role: 'check_box', name: 'Agree' } }],
      timeout_ms: 10_000,
    });
    const rows = (
      await call('POST', `/v1/claims/${claimId}/observe`, {
        window_id: windowId,
        include_screenshot: false,
      })
    ).json().elements as { element_token: string; role: string; name?: string }[];
    const token = rows.find((r) => r.role === 'check_box' && r.name === 'Agree')!.element_token;
    // Observing and launching are not actions confirmed to have worked: still nothing.
    expect(
      (await call('GET', `/v1/claims/${claimId}`)).json().time_to_first_confirmed_action_ms,
    ).toBeNull();

    const click = await call('POST', `/v1/claims/${claimId}/act`, {
      window_id: windowId,
      element_token: token,
      action: 'click',
    });
    expect(click.statusCode).toBe(200);
    expect(click.json().effect).toBe('confirmed');
    const elapsed = Date.now() - started;
    const first = (await call('GET', `/v1/claims/${claimId}`)).json()
      .time_to_first_confirmed_action_ms as number;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(elapsed + 1000);
    expect(await histogramCount()).toBe(1);

    // A second confirmed click (unchecking) changes neither the claim's figure nor the count.
    const again = await call('POST', `/v1/claims/${claimId}/act`, {
      window_id: windowId,
      element_token: token,
      action: 'click',
    });
    expect(again.json().effect).toBe('confirmed');
    expect(
      (await call('GET', `/v1/claims/${claimId}`)).json().time_to_first_confirmed_action_ms,
    ).toBe(first);
    expect(await histogramCount()).toBe(1);

    const insights = (await call('GET', '/v1/pools/ttfca/insights?window=hour')).json();
    expect(insights.first_actions).toBe(1);
    expect(insights.first_action_p50_ms).toBeCloseTo(first, 0);
    expect(
      insights.latency.filter((b: { first_actions: number }) => b.first_actions > 0),
    ).toHaveLength(1);
    await call('DELETE', `/v1/claims/${claimId}`);
  });
});
