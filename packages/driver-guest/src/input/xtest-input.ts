import type { KeyModifier } from '@cubicle/contract/guest';
import type { X11Display } from '../windows/x11/x11-display.js';
import { MODIFIER_KEYSYMS } from './press-keys.js';
import { Keymap } from './keymap.js';
import {
  fakeInput,
  XTEST_BUTTON_PRESS,
  XTEST_BUTTON_RELEASE,
  XTEST_KEY_PRESS,
  XTEST_KEY_RELEASE,
  XTEST_MOTION,
} from '../windows/x11/x11-requests.js';

/**
 * XTestPointer drives the real pointer and modifier keys through XTEST FakeInput over the
 * driver's connection, a few hundred microseconds per event instead of an xdotool spawn.
 * Each gesture ends with a round trip, so when it returns the server has processed it.
 */
export class XTestPointer {
  constructor(private readonly x11: X11Display) {}

  async move(at: { x: number; y: number }): Promise<void> {
    const x = await this.x11.conn();
    await Promise.all([fakeInput(x, await this.x11.xtestOpcode(), XTEST_MOTION, 0, at), x.sync()]);
  }

  /** click presses and releases `button` `count` times at `at`, holding `modifiers`. */
  async click(
    at: { x: number; y: number },
    button: number,
    count: number,
    modifiers: KeyModifier[] = [],
  ): Promise<void> {
    const x = await this.x11.conn();
    const op = await this.x11.xtestOpcode();
    const mods = await this.modifierKeycodes(modifiers);
    // Pipelined: the events queue on the socket in order and one round trip confirms them all.
    const sent = [fakeInput(x, op, XTEST_MOTION, 0, at)];
    for (const k of mods) sent.push(fakeInput(x, op, XTEST_KEY_PRESS, k));
    for (let i = 0; i < count; i += 1) {
      sent.push(fakeInput(x, op, XTEST_BUTTON_PRESS, button));
      sent.push(fakeInput(x, op, XTEST_BUTTON_RELEASE, button));
    }
    for (const k of [...mods].reverse()) sent.push(fakeInput(x, op, XTEST_KEY_RELEASE, k));
    sent.push(x.sync());
    await Promise.all(sent);
  }

  /**
   * button presses (`isDown`) or releases `button` at `at`. A press is left held on purpose: the
   * caller's next request releases it (computer-use `left_mouse_down` … `left_mouse_up`).
   */
  async button(at: { x: number; y: number }, button: number, isDown: boolean): Promise<void> {
    const x = await this.x11.conn();
    const op = await this.x11.xtestOpcode();
    await Promise.all([
      fakeInput(x, op, XTEST_MOTION, 0, at),
      fakeInput(x, op, isDown ? XTEST_BUTTON_PRESS : XTEST_BUTTON_RELEASE, button),
      x.sync(),
    ]);
  }

  /** drag presses at `from`, moves in steps (apps ignore a teleporting pointer), releases at `to`. */
  async drag(from: { x: number; y: number }, to: { x: number; y: number }, button: number) {
    const x = await this.x11.conn();
    const op = await this.x11.xtestOpcode();
    await Promise.all([
      fakeInput(x, op, XTEST_MOTION, 0, from),
      fakeInput(x, op, XTEST_BUTTON_PRESS, button),
      x.sync(),
    ]);
    const steps = 10;
    for (let i = 1; i <= steps; i += 1) {
      const at = {
        x: Math.round(from.x + ((to.x - from.x) * i) / steps),
        y: Math.round(from.y + ((to.y - from.y) * i) / steps),
      };
      await Promise.all([fakeInput(x, op, XTEST_MOTION, 0, at), x.sync()]);
      await new Promise((r) => setTimeout(r, 8));
    }
    await Promise.all([fakeInput(x, op, XTEST_BUTTON_RELEASE, button), x.sync()]);
  }

  private async modifierKeycodes(modifiers: KeyModifier[]): Promise<number[]> {
    if (modifiers.length === 0) return [];
    const keymap = await Keymap.open(this.x11);
    const out: number[] = [];
    for (const m of modifiers) out.push((await keymap.keyFor(MODIFIER_KEYSYMS[m])).keycode);
    return out;
  }
}
