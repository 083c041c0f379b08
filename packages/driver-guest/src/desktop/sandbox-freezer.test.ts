import { describe, expect, it } from 'vitest';
import { freezerOf, parseFrozen } from './sandbox-freezer.js';

describe('parseFrozen', () => {
  it('reads v1 freezer.state: only FROZEN is frozen (FREEZING has not settled)', () => {
    expect(parseFrozen(1, 'FROZEN\n')).toBe(true);
    expect(parseFrozen(1, 'FREEZING\n')).toBe(false);
    expect(parseFrozen(1, 'THAWED\n')).toBe(false);
  });

  it('reads v2 cgroup.events', () => {
    expect(parseFrozen(2, 'populated 1\nfrozen 1\n')).toBe(true);
    expect(parseFrozen(2, 'populated 1\nfrozen 0\n')).toBe(false);
  });
});

describe('freezerOf', () => {
  it('has none for a v1 cgroup outside the freezer hierarchy', () => {
    expect(freezerOf({ version: 1, paths: ['/nonexistent/cpu/cubicle/x'] })).toBeNull();
  });
});
