import { describe, expect, it } from 'vitest';
import { keysymNamed, parseCombo } from './press-keys.js';

describe('parseCombo', () => {
  it('resolves modifiers and keysym names without a keymap', () => {
    expect(parseCombo('ctrl+shift+Tab')).toEqual({ modifiers: [0xffe3, 0xffe1], key: 0xff09 });
    expect(parseCombo('Return')).toEqual({ modifiers: [], key: 0xff0d });
    expect(parseCombo('ctrl+s')).toEqual({ modifiers: [0xffe3], key: 0x73 });
    expect(keysymNamed('F12')).toBe(0xffc9);
    expect(keysymNamed('KP_Add')).toBe(0xffab);
    expect(keysymNamed('plus')).toBe(0x2b);
  });

  it('returns null for a name it does not know, so nothing is half-sent', () => {
    expect(parseCombo('NoSuchKeyName')).toBeNull();
    expect(parseCombo('ctrl+F36')).toBeNull();
  });
});
