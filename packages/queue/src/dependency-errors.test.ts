import { describe, expect, it } from 'vitest';
import { isDependencyUnavailable } from './dependency-errors.js';
import { DEPENDENCY_WAIT, dependencyWaitMs } from './dispatch.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDependencyUnavailable', () => {
  it('knows an unreachable Postgres or Redis, also behind a cause', () => {
    // What Prisma's pg adapter threw with the embedded Postgres stopped (unix socket gone).
    expect(isDependencyUnavailable(coded('ENOENT', 'connect ENOENT /tmp/x/.s.PGSQL.5432'))).toBe(
      true,
    );
    expect(isDependencyUnavailable(coded('EPIPE', 'write EPIPE'))).toBe(true);
    expect(isDependencyUnavailable(coded('57P01', 'terminating connection'))).toBe(true);
    expect(isDependencyUnavailable(coded('P1001'))).toBe(true);
    expect(
      isDependencyUnavailable(
        new Error('query failed', { cause: coded('ECONNREFUSED', 'connect ECONNREFUSED') }),
      ),
    ).toBe(true);
    expect(isDependencyUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDependencyUnavailable(new Error('Connection is closed.'))).toBe(true);
  });

  it('leaves the work’s own failures alone', () => {
    expect(isDependencyUnavailable(new Error('the desktop did not start in 30 s'))).toBe(false);
    expect(isDependencyUnavailable(coded('23505', 'duplicate key value'))).toBe(false);
    expect(isDependencyUnavailable(coded('P2002'))).toBe(false);
    expect(isDependencyUnavailable(undefined)).toBe(false);
    expect(isDependencyUnavailable('ECONNREFUSED')).toBe(false);
  });
});

describe('dependencyWaitMs', () => {
  it('backs off from the first wait to the cap, and gives up after the bound', () => {
    const waits = [0, 1, 2, 3, 4, 10].map((n) => dependencyWaitMs(DEPENDENCY_WAIT, n, 0, 1_000));
    expect(waits).toEqual([250, 500, 1_000, 2_000, 2_000, 2_000]);
    expect(dependencyWaitMs(DEPENDENCY_WAIT, 3, 0, DEPENDENCY_WAIT.giveUpAfterMs)).toBeUndefined();
  });
});
