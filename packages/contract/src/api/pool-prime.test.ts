import { describe, expect, it } from 'vitest';
import { Claim } from './claim.js';
import { PoolSpec } from './pool.js';

const pathsOf = (prime: unknown) => {
  const r = PoolSpec.safeParse({ image: 'img', prime });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.slice(1).join('.')}: ${i.message}`);
};

describe('pool prime', () => {
  it('is null by default: a pool primes nothing unless asked', () => {
    expect(PoolSpec.parse({ image: 'img' }).prime).toBeNull();
  });

  it('takes apps by their launch names, a page for a browser, a wait and a total timeout', () => {
    const spec = PoolSpec.parse({
      image: 'img',
      prime: {
        apps: [
          {
            app: 'browser',
            url: 'http://127.0.0.1:8080/form.html',
            wait_for: { kind: 'window_title', contains: 'Form' },
          },
          {
            app: 'office.writer',
            wait_for: { kind: 'element', name: 'Save', role: 'push_button' },
          },
          { app: 'terminal', wait_for: { kind: 'delay', ms: 500 } },
        ],
      },
    });
    expect(spec.prime?.timeout_seconds).toBe(60);
    expect(spec.prime?.restore).toBeNull();
    expect(spec.prime?.apps.map((a) => a.app)).toEqual(['browser', 'office.writer', 'terminal']);
  });

  it('refuses what could never prime, naming the field', () => {
    expect(pathsOf({ apps: [] })[0]).toMatch(/^apps:/);
    expect(pathsOf({ apps: [{ app: 'paint' }] })[0]).toMatch(/^apps\.0\.app:/);
    expect(pathsOf({ apps: [{ app: 'terminal', url: 'https://example.com/' }] })[0]).toMatch(
      /^apps\.0\.url: url opens a page in a browser app/,
    );
    expect(pathsOf({ apps: [{ app: 'browser', url: 'javascript:alert(1)' }] })[0]).toMatch(
      /^apps\.0\.url:/,
    );
    expect(pathsOf({ apps: [{ app: 'browser' }, { app: 'browser' }] })[0]).toMatch(
      /^apps: each app at most once/,
    );
    expect(
      pathsOf({ apps: [{ app: 'browser', wait_for: { kind: 'window_title', contains: '' } }] })[0],
    ).toMatch(/^apps\.0\.wait_for\.contains:/);
    expect(pathsOf({ apps: [{ app: 'browser', wait_for: { kind: 'sleep' } }] })[0]).toMatch(
      /^apps\.0\.wait_for\.kind:/,
    );
    expect(pathsOf({ apps: [{ app: 'browser' }], timeout_seconds: 0 })[0]).toMatch(
      /^timeout_seconds:/,
    );
    expect(pathsOf({ apps: Array.from({ length: 9 }, () => ({ app: 'terminal' })) })[0]).toMatch(
      /^apps:/,
    );
  });

  it('keeps restore as a reserved slot: only null until profiles and snapshots exist', () => {
    expect(pathsOf({ apps: [{ app: 'browser' }], restore: null })).toEqual([]);
    expect(pathsOf({ apps: [{ app: 'browser' }], restore: { profile: 'p' } })[0]).toMatch(
      /^restore:/,
    );
  });

  it('a claim lists its primed windows', () => {
    const shape = Claim.shape.primed_windows;
    expect(
      shape.parse([{ app: 'browser', window_id: 4_194_311, title: 'Form - Chromium', pid: 42 }]),
    ).toHaveLength(1);
    expect(shape.safeParse([{ app: 'browser', window_id: 0, title: '', pid: 42 }]).success).toBe(
      false,
    );
  });
});
