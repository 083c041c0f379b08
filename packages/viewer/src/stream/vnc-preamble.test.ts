import { describe, expect, it } from 'vitest';
import { vncPreambleOf } from './vnc-preamble.js';

describe('vncPreambleOf', () => {
  it('matches the vector the guest checks against (driver-guest viewer-preamble.test.ts)', () => {
    expect(vncPreambleOf('t'.repeat(64)).toString('latin1')).toBe(
      'CUBICLE-VNC/1 83b564998029e8f45ccc8197ddbee45bd0e9242d3aac23c81617d1d16be0b7f6\n',
    );
    expect(vncPreambleOf('t'.repeat(64)).length).toBe(79);
  });
});
