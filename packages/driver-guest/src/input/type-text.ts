import { setTimeout as sleep } from 'node:timers/promises';
import type { X11Display } from '../windows/x11/x11-display.js';
import { Keymap } from './keymap.js';

const KEY_DELAY_MS = 6;

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
 * typeText types Unicode text through XTEST key events, one character at a time through the
 * guest's Keymap (characters off the map are bound to spare keycodes). Returns how many
 * characters were delivered before any failure.
 *
 * `settled`, when given, is awaited before the spare keycodes are restored: a caller that can
 * read the text back waits there until the app has consumed the keys. Chromium translates a
 * key event with the keymap it holds when it reads the event, so under load (its UI thread busy
 * serialising a large page) it read the last bound key after the restore and dropped it
 * (measured: "…ünïcode 本" read back without "本" on the 2,000-row page).
 *
 * `keyGapMs` spaces the keys apart (KEY_DELAY_MS unless the caller knows the app takes keys
 * unpaced: see keyGapMs in a11y/action-latency.ts). Paced keys each end with their own round
 * trip, so the server has processed one before the next is sent; unpaced keys whose keycodes
 * are all bound up front go out as one run with one round trip (Keymap.pressAll): on a loaded
 * machine each round trip to the X server took 1-26 ms (measured, Chromium at load ~25).
 * `keymap`, when given, is the keymap already being opened (a caller that raises the window
 * first opens it alongside: both are requests on the same X connection).
 */
export async function typeText(
  x11: X11Display,
  text: string,
  settled?: () => Promise<void>,
  keyGapMs = KEY_DELAY_MS,
  opened?: Promise<Keymap>,
): Promise<{ delivered: number; requested: number; error?: string }> {
  const chars = [...text];
  const keymap = await (opened ?? Keymap.open(x11));
  let delivered = 0;
  try {
    // Keys go one at a time (Keymap.press), paced unless the caller says the app needs no
    // pause: a whole word sent as one XTest batch lost or garbled characters in Firefox on a
    // loaded machine (the clean-clone run's web-form-defaults).
    const keysyms = chars.map(keysymOf);
    await keymap.prepare(keysyms);
    if (keyGapMs <= 0 && keymap.hasKeysFor(keysyms)) {
      await keymap.pressAll(await Promise.all(keysyms.map((k) => keymap.keyFor(k))));
      delivered = chars.length;
      return { delivered, requested: chars.length };
    }
    for (const ch of chars) {
      await keymap.press(await keymap.keyFor(keysymOf(ch)));
      delivered += 1;
      // The pause spaces keys apart; after the last one there is nothing to space.
      if (delivered < chars.length && keyGapMs > 0) await sleep(keyGapMs);
    }
    return { delivered, requested: chars.length };
  } catch (err) {
    return { delivered, requested: chars.length, error: (err as Error).message };
  } finally {
    if (delivered > 0) await settled?.().catch(() => undefined);
    await keymap.close();
  }
}
