import { describe, expect, it } from 'vitest';
import { CubicleError } from '../errors.js';
import { modifierList, toCombos, xdotoolCombos } from './keys.js';

describe('computer-use key names', () => {
  it("reads Anthropic's xdotool combos, several separated by spaces", () => {
    expect(xdotoolCombos('ctrl+s')).toEqual(['ctrl+s']);
    expect(xdotoolCombos('Return')).toEqual(['Return']);
    expect(xdotoolCombos('ctrl+shift+Tab')).toEqual(['ctrl+shift+Tab']);
    expect(xdotoolCombos('ctrl+a Delete')).toEqual(['ctrl+a', 'Delete']);
    expect(xdotoolCombos('ctrl++')).toEqual(['ctrl+plus']);
    expect(xdotoolCombos('super')).toEqual(['Super_L']);
    expect(xdotoolCombos('Page_Down')).toEqual(['Next']);
    // xdotool's ctrl+A is Ctrl+Shift+A: the letter's case is kept.
    expect(xdotoolCombos('ctrl+A')).toEqual(['ctrl+A']);
  });

  it("reads OpenAI's key lists, case-folded, modifiers held around each other key", () => {
    expect(toCombos(['CTRL', 'A'], true)).toEqual(['ctrl+a']);
    expect(toCombos(['ENTER'], true)).toEqual(['Return']);
    expect(toCombos(['SHIFT', 'ARROWLEFT'], true)).toEqual(['shift+Left']);
    expect(toCombos(['CMD', 'ALT', 'ESC'], true)).toEqual(['super+alt+Escape']);
    expect(toCombos(['SHIFT'], true)).toEqual(['Shift_L']);
    expect(toCombos(['/'], true)).toEqual(['slash']);
    expect(toCombos(['F5', 'PAGEDOWN'], true)).toEqual(['F5', 'Next']);
  });

  it('reads the modifiers of a click and refuses what is not one', () => {
    expect(modifierList('shift')).toEqual(['shift']);
    expect(modifierList('ctrl+alt')).toEqual(['ctrl', 'alt']);
    expect(modifierList(undefined)).toBeUndefined();
    expect(() => modifierList('hello')).toThrow(CubicleError);
    expect(() => toCombos([], true)).toThrow(/no key/);
    expect(() => xdotoolCombos('ctrl+é')).toThrow(/not a key name/);
  });
});
