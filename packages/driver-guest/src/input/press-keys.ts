import { setTimeout as sleep } from 'node:timers/promises';
import type { KeyModifier } from '@cubicle/contract/guest';
import type { X11Display } from '../windows/x11/x11-display.js';
import { type Key, Keymap } from './keymap.js';

/** MODIFIER_KEYSYMS are the left-hand keys of the modifiers a request may hold. */
export const MODIFIER_KEYSYMS: Record<KeyModifier, number> = {
  shift: 0xffe1, // Shift_L
  ctrl: 0xffe3, // Control_L
  alt: 0xffe9, // Alt_L
  super: 0xffeb, // Super_L
};

// Keysym names of keys without a character, and of the ASCII punctuation (`plus`, `comma`):
// the names agents use in combos. Letters and digits are their own names.
// prettier-ignore
const NAMED: Record<string, number> = {
  BackSpace: 0xff08, Tab: 0xff09, Return: 0xff0d, Pause: 0xff13, Scroll_Lock: 0xff14,
  Escape: 0xff1b, Delete: 0xffff, Home: 0xff50, Left: 0xff51, Up: 0xff52, Right: 0xff53,
  Down: 0xff54, Prior: 0xff55, Page_Up: 0xff55, Next: 0xff56, Page_Down: 0xff56, End: 0xff57,
  Print: 0xff61, Insert: 0xff63, Menu: 0xff67, Num_Lock: 0xff7f, Caps_Lock: 0xffe5,
  KP_Enter: 0xff8d, KP_Multiply: 0xffaa, KP_Add: 0xffab, KP_Subtract: 0xffad,
  KP_Decimal: 0xffae, KP_Divide: 0xffaf,
  Shift_L: 0xffe1, Shift_R: 0xffe2, Control_L: 0xffe3, Control_R: 0xffe4, Alt_L: 0xffe9,
  Alt_R: 0xffea, Super_L: 0xffeb, Super_R: 0xffec,
  space: 0x20, exclam: 0x21, quotedbl: 0x22, numbersign: 0x23, dollar: 0x24, percent: 0x25,
  ampersand: 0x26, apostrophe: 0x27, parenleft: 0x28, parenright: 0x29, asterisk: 0x2a,
  plus: 0x2b, comma: 0x2c, minus: 0x2d, period: 0x2e, slash: 0x2f, colon: 0x3a,
  semicolon: 0x3b, less: 0x3c, equal: 0x3d, greater: 0x3e, question: 0x3f, at: 0x40,
  bracketleft: 0x5b, backslash: 0x5c, bracketright: 0x5d, asciicircum: 0x5e, underscore: 0x5f,
  grave: 0x60, braceleft: 0x7b, bar: 0x7c, braceright: 0x7d, asciitilde: 0x7e,
};

/**
 * keysymNamed resolves one keysym name of a KeyCombo: a letter or digit, F1–F35, KP_0–KP_9, or a
 * name of NAMED. Null for any other name, which is then refused rather than half-sent.
 */
export function keysymNamed(name: string): number | null {
  if (/^[A-Za-z0-9]$/.test(name)) return name.charCodeAt(0);
  const f = /^F([1-9]|[12][0-9]|3[0-5])$/.exec(name);
  if (f) return 0xffbe + Number(f[1]) - 1;
  const kp = /^KP_([0-9])$/.exec(name);
  if (kp) return 0xffb0 + Number(kp[1]);
  return NAMED[name] ?? null;
}

/** parseCombo splits `ctrl+shift+Tab` into modifier keysyms and the key's keysym. */
export function parseCombo(combo: string): { modifiers: number[]; key: number } | null {
  const parts = combo.split('+');
  const key = keysymNamed(parts.pop() ?? '');
  if (key === null) return null;
  const modifiers = parts.map((m) => MODIFIER_KEYSYMS[m as KeyModifier]);
  return modifiers.every((m) => m !== undefined) ? { modifiers, key } : null;
}

/**
 * pressKeys sends a key combo `repeat` times through XTEST and the guest's Keymap, each press
 * held `holdMs`. An unknown name is reported before anything is sent (`unknownKey`, nothing
 * delivered).
 */
export async function pressKeys(
  x11: X11Display,
  combo: string,
  repeat: number,
  holdMs = 0,
): Promise<{ delivered: number; unknownKey: boolean; error?: string }> {
  const parsed = parseCombo(combo);
  if (!parsed) return { delivered: 0, unknownKey: true };
  const keymap = await Keymap.open(x11);
  let delivered = 0;
  try {
    const held: Key[] = [];
    for (const m of parsed.modifiers) held.push(await keymap.keyFor(m));
    const key = await keymap.keyFor(parsed.key);
    for (let i = 0; i < repeat; i += 1) {
      await keymap.press(key, held, holdMs);
      delivered += 1;
      if (i + 1 < repeat) await sleep(12);
    }
    return { delivered, unknownKey: false };
  } catch (err) {
    return { delivered, unknownKey: false, error: (err as Error).message };
  } finally {
    await keymap.close();
  }
}
