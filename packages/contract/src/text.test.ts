import { describe, expect, it } from 'vitest';
import {
  ClaimListQuery,
  CreateApiKeyRequest,
  CreateClaimRequest,
  ListQuery,
  PoolSpec,
  Routes,
} from './api/index.js';
import { WindowLaunchRequest } from './guest/index.js';
import { isStorableText, STORABLE_TEXT_PATTERN, TEXT_RULE } from './text.js';

const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';

/** issueOf returns the failing field's path and message of a schema's first issue. */
function issueOf(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) {
  expect(result.success).toBe(false);
  const issue = result.error!.issues[0]!;
  return { path: issue.path.map(String).join('.'), message: issue.message };
}

describe('the request string rule', () => {
  it('refuses NUL and unpaired surrogates, keeps every well-formed string', () => {
    for (const bad of [NUL, `a${NUL}b`, LONE_HIGH, LONE_LOW, `x${LONE_HIGH}`, `${LONE_LOW}\ud800`])
      expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ['', 'plain', 'ümlaut', '😀', 'a😀b', '\u0001\u001f', '\uffff'])
      expect(isStorableText(good), JSON.stringify(good)).toBe(true);
  });

  it('names the field of claim metadata keys and values', () => {
    expect(issueOf(CreateClaimRequest.safeParse({ metadata: { job: `a${NUL}` } }))).toEqual({
      path: 'metadata.job',
      message: TEXT_RULE,
    });
    expect(issueOf(CreateClaimRequest.safeParse({ metadata: { job: LONE_HIGH } })).path).toBe(
      'metadata.job',
    );
    expect(CreateClaimRequest.safeParse({ metadata: { [`k${LONE_LOW}`]: 'v' } }).success).toBe(
      false,
    );
  });

  it('covers API key names, pool images and env values', () => {
    expect(issueOf(CreateApiKeyRequest.safeParse({ name: `ci${NUL}` })).path).toBe('name');
    expect(issueOf(PoolSpec.safeParse({ image: `img${NUL}` })).path).toBe('image');
    expect(issueOf(PoolSpec.safeParse({ image: 'img', env: { A: LONE_HIGH } })).path).toBe('env.A');
  });

  it('validates cursors like ids', () => {
    expect(ClaimListQuery.safeParse({ cursor: `clm_${NUL}` }).success).toBe(false);
    expect(ListQuery.safeParse({ cursor: `abc${NUL}` }).success).toBe(false);
    expect(
      ListQuery.safeParse({ cursor: 'MjAyNi0xMi0wMVQwMDowMDowMC4wMDBafGtleV8x' }).success,
    ).toBe(true);
    const pools = Routes.listPools.query.safeParse({ cursor: 'pool_01jd0000000000000000000000' });
    expect(pools.success).toBe(true);
    expect(Routes.listPools.query.safeParse({ cursor: 'not-a-pool-id' }).success).toBe(false);
  });

  it('refuses an empty argv element (windows/launch argv [""])', () => {
    expect(issueOf(WindowLaunchRequest.safeParse({ argv: [''] })).path).toBe('argv.0');
    expect(WindowLaunchRequest.safeParse({ argv: ['xterm', ''] }).success).toBe(false);
    expect(WindowLaunchRequest.safeParse({ argv: ['xterm', '-e', 'true'] }).success).toBe(true);
  });
});

describe('the published pattern of the string rule', () => {
  it('agrees with isStorableText, with and without the u flag, on every short mix of code units', () => {
    // Every string of up to 3 units over the units that matter (NUL, lead and trail surrogates,
    // ASCII, BMP) and a random sample of longer ones: the pattern and the check never differ.
    const units = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a', '\u00e9', '\uffff'];
    const strings = [''];
    for (let n = 0; n < 3; n++)
      for (const s of strings.filter((x) => x.length === n))
        for (const u of units) strings.push(s + u);
    let seed = 37;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 2000; i++)
      strings.push(
        Array.from({ length: next() % 12 }, () => units[next() % units.length]).join(''),
      );
    for (const flags of ['', 'u']) {
      const pattern = new RegExp(STORABLE_TEXT_PATTERN, flags);
      for (const s of strings)
        expect(pattern.test(s), `${flags} ${JSON.stringify(s)}`).toBe(isStorableText(s));
    }
    expect(strings.length).toBeGreaterThan(500);
  });
});
