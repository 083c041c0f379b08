/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the routes validate them against the contract. */
// The guest driver on a real terminal (xfce4-terminal, VTE): a command typed into the terminal by
// its token runs in the shell, and its output is read back from the terminal's a11y text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA11yHarness, type A11yDesktopHarness } from './helpers/a11y-desktop.js';
import { launchApp, observeUntil, type LaunchedApp } from './helpers/launched-app.js';

describe('a terminal through the guest driver', () => {
  let h: A11yDesktopHarness;
  let term: LaunchedApp | undefined;

  beforeAll(async () => {
    h = await startA11yHarness();
    term = await launchApp(h, 'terminal');
  });
  afterAll(async () => {
    await term?.stop();
    await h?.stop();
  });

  it('a command typed by token runs, and its output is read from the a11y text', async () => {
    const { windowId } = term!;
    // The shell prints its prompt after the window maps: wait until the screen shows one.
    const { row } = await observeUntil(
      h,
      windowId,
      (r) => r.role === 'terminal' && /[#$] *$/m.test(r.value ?? ''),
      { roles: ['terminal'] },
    );
    expect(row.value).not.toContain('cubicle-42');
    const typed = await h.call('/v1/act/element', {
      window_id: windowId,
      action: 'type_text',
      element_token: row.element_token,
      // The output differs from the echoed command line, so reading it proves the shell ran it.
      text: 'echo cubicle-$((6*7))\n',
      delivery_mode: 'foreground',
    });
    expect(typed.json.effect, JSON.stringify(typed.json)).toBe('confirmed');
    const verified = await h.call('/v1/verify_state', {
      window_id: windowId,
      predicates: [
        {
          kind: 'element_exists',
          selector: { role: 'terminal', value_contains: '\ncubicle-42' },
          unique: true,
        },
      ],
      timeout_ms: 10_000,
    });
    expect(verified.json.status, JSON.stringify(verified.json)).toBe('satisfied');
  });

  it('typing into the terminal in background mode is refused, nothing typed', async () => {
    const { windowId } = term!;
    const { row } = await observeUntil(h, windowId, (r) => r.role === 'terminal', {
      roles: ['terminal'],
    });
    const res = await h.call('/v1/act/element', {
      window_id: windowId,
      action: 'type_text',
      element_token: row.element_token,
      text: 'echo never\n',
      delivery_mode: 'background', // omitted, the driver would type it in the foreground
    });
    expect(res.json.effect).toBe('refused');
    expect(res.json.escalation.target).toBe('foreground');
    const after = await observeUntil(h, windowId, (r) => r.role === 'terminal', {
      roles: ['terminal'],
    });
    expect(after.row.value).not.toContain('never');
  });
});
