import { setTimeout as sleep } from 'node:timers/promises';
import type { X11Display } from '../windows/x11/x11-display.js';
import {
  changeKeyboardMapping,
  fakeInput,
  getKeyboardMapping,
  XTEST_KEY_PRESS,
  XTEST_KEY_RELEASE,
} from '../windows/x11/x11-requests.js';

const SHIFT_L = 0xffe1;
// Apps re-read the keymap lazily after a MappingNotify; a spare keycode is reused only after
// all others were, and restored only after this pause, so no app reads a keycode mid-change.
const RESTORE_AFTER_MS = 150;
/**
 * Pause between binding keys up front and pressing them. Chromium reloads its keymap after a
 * MappingNotify on its own schedule; a key pressed right after its keycode was bound reached it
 * before the reload and was dropped (measured: "ü" lost from "…— ünïcode 本" with a 2,000-row
 * page loaded, 6 ms after the bind).
 */
const BIND_SETTLE_MS = 100;

/** Key is a keycode to press, with Shift held when the keysym is on the key's second level. */
export interface Key {
  keycode: number;
  shift: boolean;
}

/**
 * Keymap is the one keymap strategy of the guest, for typed text and key combos alike: a keysym
 * on the current map uses its key (Shift for the second level); any other keysym is bound to a
 * spare keycode (one with no keysyms) while it is used. Spares rotate and are restored only when
 * the keymap is closed: restoring right after each key (as xdotool does) made GTK look the key
 * up in the restored map and drop the character (seen with "ß" and "本").
 */
export class Keymap {
  private readonly used = new Set<number>();
  /** Which keysym each bound spare holds now, so a repeated character reuses its key. */
  private readonly holds = new Map<number, number>();
  private next = 0;

  private constructor(
    private readonly x11: X11Display,
    private readonly per: number,
    private readonly home: Map<number, Key>,
    private readonly spares: number[],
  ) {}

  static async open(x11: X11Display): Promise<Keymap> {
    const map = await getKeyboardMapping(await x11.conn());
    const home = new Map<number, Key>();
    const spares: number[] = [];
    map.keysyms.forEach((row, i) => {
      const keycode = map.minKeycode + i;
      if (row.every((k) => k === 0)) spares.push(keycode);
      if (row[0] && !home.has(row[0])) home.set(row[0], { keycode, shift: false });
      if (row[1] && !home.has(row[1])) home.set(row[1], { keycode, shift: true });
    });
    return new Keymap(x11, map.per, home, spares);
  }

  /** keyFor returns the key that produces `keysym`, binding a spare keycode if none does. */
  async keyFor(keysym: number): Promise<Key> {
    const key = this.home.get(keysym);
    if (key && (!key.shift || this.home.has(SHIFT_L))) return key;
    for (const [keycode, held] of this.holds) if (held === keysym) return { keycode, shift: false };
    if (this.spares.length === 0) throw new Error('no spare keycode to bind a key to');
    const keycode = this.spares[this.next % this.spares.length]!;
    this.next += 1;
    this.used.add(keycode);
    this.holds.set(keycode, keysym);
    // Both levels carry the keysym, so a held Shift cannot change the character.
    const row = Array<number>(this.per).fill(0);
    row[0] = keysym;
    row[1] = keysym;
    const x = await this.x11.conn();
    await Promise.all([changeKeyboardMapping(x, keycode, row), x.sync()]);
    return { keycode, shift: false };
  }

  /** hasKeysFor: every keysym has a key now (on the map or bound by prepare): no bind is due. */
  hasKeysFor(keysyms: number[]): boolean {
    const held = new Set(this.holds.values());
    return keysyms.every(
      (k) =>
        held.has(k) || (this.home.has(k) && (!this.home.get(k)!.shift || this.home.has(SHIFT_L))),
    );
  }

  /**
   * prepare binds every keysym off the map before the first key is pressed, then pauses once
   * (BIND_SETTLE_MS) so the apps have reloaded their keymap when the keys arrive. Text with more
   * distinct off-map characters than spare keycodes is bound as it is typed instead.
   */
  async prepare(keysyms: number[]): Promise<void> {
    const off = new Set(keysyms.filter((k) => !this.home.has(k)));
    if (off.size === 0 || off.size > this.spares.length) return;
    for (const k of off) await this.keyFor(k);
    await sleep(BIND_SETTLE_MS);
  }

  /**
   * press sends one key stroke with `held` keys pressed around it (modifiers), and Shift when the
   * key needs it; one round trip confirms the server processed it all. With `holdMs` the keys
   * stay down that long before the release (a held key, which apps may auto-repeat).
   */
  async press(key: Key, held: Key[] = [], holdMs = 0): Promise<void> {
    const x = await this.x11.conn();
    const op = await this.x11.xtestOpcode();
    const down = [...held, ...(key.shift ? [this.home.get(SHIFT_L)!] : [])];
    const events = [];
    for (const k of down) events.push(fakeInput(x, op, XTEST_KEY_PRESS, k.keycode));
    events.push(fakeInput(x, op, XTEST_KEY_PRESS, key.keycode));
    if (holdMs > 0) {
      await Promise.all([...events.splice(0), x.sync()]);
      await sleep(holdMs);
    }
    events.push(fakeInput(x, op, XTEST_KEY_RELEASE, key.keycode));
    for (const k of [...down].reverse())
      events.push(fakeInput(x, op, XTEST_KEY_RELEASE, k.keycode));
    await Promise.all([...events, x.sync()]);
  }

  /**
   * pressAll sends a run of key strokes (Shift where a key needs it) and confirms them with one
   * round trip instead of one per key: for an app that reads its keys unpaced (see typeText's
   * `keyGapMs`). Each key goes down and up before the next one goes down, in order.
   */
  async pressAll(keys: Key[]): Promise<void> {
    const x = await this.x11.conn();
    const op = await this.x11.xtestOpcode();
    const events = [];
    for (const key of keys) {
      const shift = key.shift ? [this.home.get(SHIFT_L)!] : [];
      for (const k of shift) events.push(fakeInput(x, op, XTEST_KEY_PRESS, k.keycode));
      events.push(fakeInput(x, op, XTEST_KEY_PRESS, key.keycode));
      events.push(fakeInput(x, op, XTEST_KEY_RELEASE, key.keycode));
      for (const k of shift) events.push(fakeInput(x, op, XTEST_KEY_RELEASE, k.keycode));
    }
    await Promise.all([...events, x.sync()]);
  }

  /** close restores the spare keycodes it bound, after apps had time to read the keys. */
  async close(): Promise<void> {
    if (this.used.size === 0) return;
    await sleep(RESTORE_AFTER_MS);
    const x = await this.x11.conn();
    const empty = Array<number>(this.per).fill(0);
    await Promise.all([
      ...[...this.used].map((k) => changeKeyboardMapping(x, k, empty)),
      x.sync(),
    ]).catch(() => undefined);
  }
}
