import { describe, expect, it } from 'vitest';
import { Pool, PoolSpec } from './pool.js';

describe('pool kubernetes section', () => {
  it('is optional and null by default', () => {
    expect(PoolSpec.parse({ image: 'img' }).kubernetes).toBeNull();
  });

  it('accepts a runtime class, a node selector and tolerations', () => {
    const spec = PoolSpec.parse({
      image: 'img',
      backend: 'kubernetes',
      kubernetes: {
        runtime_class_name: 'gvisor',
        node_selector: { 'node.kubernetes.io/instance-type': 'm5.xlarge', desktops: '' },
        tolerations: [{ key: 'desktops', operator: 'Exists', effect: 'NoSchedule' }],
      },
    });
    expect(spec.kubernetes?.tolerations?.[0]).toEqual({
      key: 'desktops',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
  });

  it('rejects what the API server would reject, naming the field', () => {
    const bad = (kubernetes: unknown) => PoolSpec.safeParse({ image: 'img', kubernetes });
    const pathOf = (kubernetes: unknown) => {
      const r = bad(kubernetes);
      return r.success ? null : r.error.issues[0]?.path.join('.');
    };
    expect(pathOf({ runtime_class_name: 'GVisor!' })).toBe('kubernetes.runtime_class_name');
    expect(pathOf({ node_selector: { 'bad key!': 'x' } })).toMatch(/^kubernetes\.node_selector/);
    expect(pathOf({ node_selector: { ok: 'bad value!' } })).toMatch(/^kubernetes\.node_selector/);
    expect(pathOf({ tolerations: [{ key: 'a', operator: 'Exists', value: 'x' }] })).toBe(
      'kubernetes.tolerations.0.value',
    );
    expect(pathOf({ tolerations: [{ effect: 'Sometimes' }] })).toBe(
      'kubernetes.tolerations.0.effect',
    );
    expect(pathOf({ gpu: true })).toBe('kubernetes');
  });

  it('appears in the pool view as null or the section', () => {
    expect(Pool.shape.kubernetes.safeParse(null).success).toBe(true);
    expect(Pool.shape.kubernetes.safeParse({ runtime_class_name: 'gvisor' }).success).toBe(true);
  });
});
