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
const KEY_DELAY_MS = 6;
// Apps re-read the keymap lazily after a MappingNotify; a spare keycode is reused only after
// all others were, and restored only after this pause, so no app reads a keycode mid-change.
const RESTORE_AFTER_MS = 150;

/** keysymOf maps a code point to its X keysym (Latin-1 direct, control keys, else Unicode). */
export function keysymOf(char: string): number {
  const c = char.codePointAt(0)!;
  if (c === 0x0a || c === 0x0d) return 0xff0d; // Return
  if (c === 0x09) return 0xff09; // Tab
  if (c === 0x08) return 0xff08; // BackSpace
  if ((c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xff)) return c;
  return 0x01000000 | c;
}

/**
 * typeText types Unicode text through XTEST key events. Characters on the current keymap use
 * their key (with Shift for the second level); any other character is bound to a spare keycode
 * (one with no keysyms) for the moment it is typed, as xdotool does, but spares rotate and are
 * restored only at the end: xdotool restores each one right after its key, and GTK then looked
 * the key up in the restored map and dropped the character (seen here with "ß" and "本").
 * Returns how many characters were delivered before any failure.
 */
export async function typeText(
  x11: X11Display,
  text: string,
): Promise<{ delivered: number; requested: number; error?: string }> {
  const chars = [...text];
  const x = await x11.conn();
  const op = await x11.xtestOpcode();
  const map = await getKeyboardMapping(x);
  const home = new Map<number, { keycode: number; shift: boolean }>();
  const spares: number[] = [];
  map.keysyms.forEach((row, i) => {
    const keycode = map.minKeycode + i;
    if (row.every((k) => k === 0)) spares.push(keycode);
    if (row[0] && !home.has(row[0])) home.set(row[0], { keycode, shift: false });
    if (row[1] && !home.has(row[1])) home.set(row[1], { keycode, shift: true });
  });
  const shiftCode = home.get(SHIFT_L)?.keycode;
  const used = new Set<number>();
  let next = 0;
  let delivered = 0;
  try {
    for (const ch of chars) {
      const keysym = keysymOf(ch);
      let key = home.get(keysym);
      if (key?.shift && shiftCode === undefined) key = undefined;
      if (!key) {
        if (spares.length === 0) throw new Error('no spare keycode to bind a character to');
        const keycode = spares[next % spares.length]!;
        next += 1;
        used.add(keycode);
        // Both levels carry the keysym, so a held Shift cannot change the character.
        const row = Array<number>(map.per).fill(0);
        row[0] = keysym;
        row[1] = keysym;
        await Promise.all([changeKeyboardMapping(x, keycode, row), x.sync()]);
        key = { keycode, shift: false };
      }
      const events = [];
      if (key.shift) events.push(fakeInput(x, op, XTEST_KEY_PRESS, shiftCode!));
      events.push(fakeInput(x, op, XTEST_KEY_PRESS, key.keycode));
      events.push(fakeInput(x, op, XTEST_KEY_RELEASE, key.keycode));
      if (key.shift) events.push(fakeInput(x, op, XTEST_KEY_RELEASE, shiftCode!));
      await Promise.all([...events, x.sync()]);
      delivered += 1;
      await sleep(KEY_DELAY_MS);
    }
    return { delivered, requested: chars.length };
  } catch (err) {
    return { delivered, requested: chars.length, error: (err as Error).message };
  } finally {
    if (used.size > 0) {
      await sleep(RESTORE_AFTER_MS);
      const empty = Array<number>(map.per).fill(0);
      await Promise.all([
        ...[...used].map((k) => changeKeyboardMapping(x, k, empty)),
        x.sync(),
      ]).catch(() => undefined);
    }
  }
}
