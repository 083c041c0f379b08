import { describe, expect, it } from 'vitest';
import { pageById } from './page-by-id.js';

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}` }));

describe('pageById', () => {
  it('keeps `limit` rows and points the cursor at the last kept one when a row is left over', () => {
    expect(pageById(rows(3), 2, (r) => r.id)).toEqual({ data: ['r0', 'r1'], next_cursor: 'r1' });
  });

  it('has no cursor when the fetch did not fill the extra row', () => {
    expect(pageById(rows(2), 2, (r) => r.id)).toEqual({ data: ['r0', 'r1'], next_cursor: null });
    expect(pageById(rows(0), 2, (r) => r.id)).toEqual({ data: [], next_cursor: null });
  });
});
