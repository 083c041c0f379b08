import { describe, expect, it } from 'vitest';
import { displayNumber, formatRelease } from './probe-desktop.js';

describe('probe-desktop', () => {
  it('reads the display number of :N and :N.S, and refuses remote displays', () => {
    expect(displayNumber(':0')).toBe(0);
    expect(displayNumber(':12.1')).toBe(12);
    expect(() => displayNumber('host:1')).toThrow(/local X display/);
  });

  it('decodes X.Org release numbers', () => {
    expect(formatRelease('12101007')).toBe('1.21.1.7');
    expect(formatRelease('12345')).toBe('12345');
  });
});
