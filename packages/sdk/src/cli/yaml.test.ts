import { describe, expect, it } from 'vitest';
import { parseYaml } from './yaml.js';

describe('parseYaml (the pools file subset)', () => {
  it('reads nested mappings, lists of mappings, scalars and comments', () => {
    const text = `
# two pools
pools:
  default:
    image: "local"   # quoted
    cpu: 0.5
    autoscaling: { min: 1, initial: 1, max: 3 }
    idle_timeout_seconds: null
    env:
      GREETING: 'it''s #1'
  browsers:
    image: local
    tags: [a, b]
list:
- name: x
  on: true
- 7
`;
    expect(parseYaml(text)).toEqual({
      pools: {
        default: {
          image: 'local',
          cpu: 0.5,
          autoscaling: { min: 1, initial: 1, max: 3 },
          idle_timeout_seconds: null,
          env: { GREETING: "it's #1" },
        },
        browsers: { image: 'local', tags: ['a', 'b'] },
      },
      list: [{ name: 'x', on: true }, 7],
    });
  });

  it('refuses what it does not understand, naming the line', () => {
    expect(() => parseYaml('a: 1\na: 2')).toThrow(/line 2: duplicate key a/);
    expect(() => parseYaml('a: &x 1')).toThrow(/line 1: unsupported/);
    expect(() => parseYaml('a: 1\n   b: 2')).toThrow(/line 2/);
    expect(() => parseYaml('just text')).toThrow(/line 1/);
  });

  it('accepts JSON', () => {
    expect(parseYaml('{"pools": {"a": {"image": "local"}}}')).toEqual({
      pools: { a: { image: 'local' } },
    });
  });
});
