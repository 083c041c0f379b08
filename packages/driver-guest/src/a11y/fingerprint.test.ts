import { describe, expect, it } from 'vitest';
import { describeMismatch, fingerprintOf, sameFingerprint } from './fingerprint.js';

const frame = { role: 'frame', name: 'App' };
const box = { role: 'filler', name: '' };

describe('fingerprint', () => {
  it('matches the same element and ancestors', () => {
    const a = fingerprintOf({ role: 'push_button', name: 'OK' }, [box, frame]);
    const b = fingerprintOf({ role: 'push_button', name: 'OK' }, [{ ...box }, { ...frame }]);
    expect(sameFingerprint(a, b)).toBe(true);
  });

  it('breaks on a rename, a re-role or an ancestor change, and says which', () => {
    const issued = fingerprintOf({ role: 'push_button', name: 'Rename me' }, [box, frame]);
    const renamed = fingerprintOf({ role: 'push_button', name: 'Renamed' }, [box, frame]);
    const reroled = fingerprintOf({ role: 'toggle_button', name: 'Rename me' }, [box, frame]);
    const moved = fingerprintOf({ role: 'push_button', name: 'Rename me' }, [frame]);
    const retitled = fingerprintOf({ role: 'push_button', name: 'Rename me' }, [
      box,
      { role: 'frame', name: 'Other' },
    ]);
    for (const live of [renamed, reroled, moved, retitled])
      expect(sameFingerprint(issued, live)).toBe(false);
    expect(describeMismatch(issued, renamed)).toContain('"Renamed"');
    expect(describeMismatch(issued, reroled)).toContain('toggle_button');
    expect(describeMismatch(issued, retitled)).toContain('ancestor');
  });
});
