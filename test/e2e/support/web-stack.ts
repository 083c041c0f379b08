// A Stack whose API listens on loopback (browsers need a real socket for pages and the viewer's
// WebSocket), the built web app in front of it, a browser, and one claimed desktop to look at.
import type { Claim } from '@cubicle/contract/api';
import type { LightMyRequestResponse as InjectResponse } from 'fastify';
import { createTestRedisNamespace, type TestRedisNamespace } from '../../harness/index.js';
import { startStack, waitFor, type Stack } from './stack.js';
import { launchBrowser, startWebServer, type Browser, type WebServer } from './web.js';

export interface WebStack {
  s: Stack;
  apiUrl: string;
  web: WebServer;
  browser: Browser;
  redis: TestRedisNamespace;
  /** The admin key itself (to type into the sign-in form). */
  apiKey: string;
  /** An API call with the admin key, through inject. */
  call(method: string, url: string, payload?: unknown): Promise<InjectResponse>;
  close(): Promise<void>;
}

/** startWebStack: the e2e Stack with its API listening on 127.0.0.1, `next start`, and Chromium. */
export async function startWebStack(): Promise<WebStack> {
  const s = await startStack();
  const redis = createTestRedisNamespace();
  let web: WebServer | undefined;
  let browser: Browser | undefined;
  try {
    const apiUrl = await s.api.listen({ host: '127.0.0.1', port: 0 });
    web = await startWebServer({ apiUrl, redisUrl: redis.url, redisPrefix: `${redis.prefix}web:` });
    browser = await launchBrowser();
    const call = (method: string, url: string, payload?: unknown) =>
      s.api.inject({
        method: method as 'GET',
        url,
        ...(payload === undefined ? {} : { payload: payload as object }),
        headers: s.auth,
      });
    return {
      s,
      apiUrl,
      web,
      browser,
      redis,
      apiKey: s.auth.authorization.slice('Bearer '.length),
      call,
      async close() {
        await browser?.close();
        await web?.stop();
        await redis.cleanup();
        await s.close();
      },
    };
  } catch (error) {
    await browser?.close();
    await web?.stop();
    await s.close();
    throw error;
  }
}

/** warmPool creates a pool of `warm` desktops and waits until they are warm (real desktops take seconds). */
export async function warmPool(w: WebStack, name: string, warm = 1) {
  const put = await w.call('PUT', `/v1/pools/${name}`, {
    image: 'local',
    autoscaling: { min: 0, initial: warm, max: warm + 1 },
  });
  if (put.statusCode >= 300) throw new Error(`PUT pool: ${put.statusCode} ${put.body}`);
  await waitFor(
    async () => (await w.call('GET', `/v1/pools/${name}`)).json().counts.warm >= warm,
    120_000,
    250,
  );
}

/** claimWithWindow claims a desktop and opens a GTK window titled `title` on it; returns the claim and the window's frame. */
export async function claimWithWindow(w: WebStack, pool: string, title: string) {
  const claimed = await w.call('POST', `/v1/pools/${pool}/claims`, { ttl_seconds: 900 });
  if (claimed.statusCode !== 201) throw new Error(`claim: ${claimed.statusCode} ${claimed.body}`);
  const claim = claimed.json() as Claim;
  const window = await launchWindow(w, claim.id, title);
  return { claim, window };
}

/** launchWindow opens a light GTK window with a big label (Debian's python3 has gi). */
export async function launchWindow(w: WebStack, claimId: string, title: string) {
  const script = [
    'import gi',
    "gi.require_version('Gtk','3.0')",
    'from gi.repository import Gtk',
    `w=Gtk.Window(title=${JSON.stringify(title)})`,
    'w.set_default_size(640,400)',
    `l=Gtk.Label(label=${JSON.stringify(title)})`,
    'w.add(l)',
    "w.connect('destroy', Gtk.main_quit)",
    'w.show_all()',
    'Gtk.main()',
  ].join('\n');
  const launched = await w.call('POST', `/v1/claims/${claimId}/windows/launch`, {
    argv: ['/usr/bin/python3', '-c', script],
    wait_for_window_ms: 20_000,
  });
  const body = launched.json();
  if (launched.statusCode !== 200 || body.window_wait !== 'found')
    throw new Error(`launch: ${launched.statusCode} ${launched.body}`);
  return body.window as {
    window_id: number;
    geometry: { x: number; y: number; w: number; h: number };
  };
}
