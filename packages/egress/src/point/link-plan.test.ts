import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LINK_RANGE,
  linkCount,
  parseLinkRange,
  parseNetnsName,
  planLink,
} from './link-plan.js';

describe('planLink', () => {
  const range = parseLinkRange(DEFAULT_LINK_RANGE);

  it('gives each index its own /30: host .1, sandbox .2', () => {
    expect(planLink(range, 0, 'abc-sbx_1')).toMatchObject({
      netns: 'cubicle-egress-0-abc-sbx_1',
      hostIf: 'cbe0',
      hostAddress: '10.217.0.1',
      sandboxAddress: '10.217.0.2',
    });
    expect(planLink(range, 16383, 'x')).toMatchObject({
      hostIf: 'cbe16383',
      hostAddress: '10.217.255.253',
      sandboxAddress: '10.217.255.254',
    });
    expect(linkCount(range)).toBe(16384);
  });

  it('refuses an index outside the range and a range that is not aligned', () => {
    expect(() => planLink(range, 16384, 'x')).toThrow(/outside/);
    expect(() => parseLinkRange('10.217.0.4/16')).toThrow(/start of the range/);
    expect(() => parseLinkRange('10.217.0.0/30')).toThrow(/between/);
  });

  it("reads back its own namespace names and no one else's", () => {
    const plan = planLink(range, 42, 'scope1-sbx_01abc');
    expect(parseNetnsName(plan.netns)).toEqual({ index: 42, desktopId: 'scope1-sbx_01abc' });
    expect(parseNetnsName('cni-1234')).toBeNull();
    expect(parseNetnsName('cubicle-egress-x-y')).toBeNull();
  });

  it('keeps interface names within the kernel limit of 15 characters', () => {
    expect(planLink(range, linkCount(range) - 1, 'x').hostIf.length).toBeLessThanOrEqual(15);
  });
});
