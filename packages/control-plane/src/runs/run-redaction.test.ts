import { describe, expect, it } from 'vitest';
import { RunRedaction } from './run-redaction.js';

describe('RunRedaction', () => {
  it('redacts every secret given, named by the run or not', () => {
    const r = new RunRedaction([
      { name: 'NAMED', value: 'named-value-1' },
      { name: 'UNNAMED', value: 'claim-value-2' },
    ]);
    const s = r.stream();
    expect(s.push('a named-value-1 b claim-value-2 c') + s.end()).toBe(
      'a [secret:NAMED] b [secret:UNNAMED] c',
    );
  });

  it('a secret added mid-stream is caught from the next chunk, also across the chunk boundary', () => {
    const r = new RunRedaction([{ name: 'FIRST', value: 'first-value' }]);
    const s = r.stream();
    // "first-va" could begin FIRST: held back…
    expect(s.push('x first-va')).toBe('x ');
    r.add([{ name: 'LATE', value: 'first-valley-late' }]);
    // …the held tail "first-va" goes through the larger set with what follows.
    expect(s.push('lley-late y') + s.end()).toBe('[secret:LATE] y');
    expect(r.stream().push('first-value ')).toBe('[secret:FIRST] ');
  });

  it('keeps values it knew after they leave the claim (a process may still hold them)', () => {
    const r = new RunRedaction([{ name: 'GONE', value: 'deleted-value' }]);
    r.add([]);
    const s = r.stream();
    expect(s.push('deleted-value') + s.end()).toBe('[secret:GONE]');
  });

  it('with nothing to redact is the identity', () => {
    const r = new RunRedaction([]);
    expect(r.hasSecrets).toBe(false);
    expect(r.stream().push('abc')).toBe('abc');
  });
});
