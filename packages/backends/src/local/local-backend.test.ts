import { describe, expect, it } from 'vitest';
import { localBackendScope } from './local-backend.js';

describe('localBackendScope', () => {
  const url = (password: string, db = 'cubicle') =>
    `postgresql://postgres:${password}@localhost/${db}?host=/srv/cubicle/.cubicle/postgres-socket`;

  it('names the database, not its password', () => {
    expect(localBackendScope(url('a'.repeat(64)))).toBe(localBackendScope(url('b'.repeat(64))));
    expect(localBackendScope(url('a'.repeat(64)))).toMatch(/^[0-9a-f]{12}$/);
  });

  it('differs between databases', () => {
    expect(localBackendScope(url('x', 'one'))).not.toBe(localBackendScope(url('x', 'two')));
  });
});
