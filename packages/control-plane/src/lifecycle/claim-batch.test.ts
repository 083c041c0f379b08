import { describe, expect, it } from 'vitest';
import { isSplittable } from './claim-batch.js';

describe('isSplittable', () => {
  it('splits a batch on errors some input may cause', () => {
    for (const code of ['22P05', '22P02', '23505', '42883', '40001', 'XX000'])
      expect(isSplittable({ code }), code).toBe(true);
  });

  it('does not split on failures every batch would share', () => {
    for (const err of [
      { code: '08006' },
      { code: '53300' },
      { code: '57P01' },
      { code: 'ECONNREFUSED' },
      new Error('Connection terminated unexpectedly'),
      null,
    ])
      expect(isSplittable(err), JSON.stringify(err)).toBe(false);
  });
});
