import { describe, expect, it } from 'vitest';
import { PoolSpec } from '@cubicle/contract/api';
import { mergePlacement, parseLabelSelector, placementFromPool } from './placement.js';

describe('mergePlacement', () => {
  it('is empty when nothing is asked', () => {
    expect(mergePlacement()).toEqual({});
  });
  it('lets the pool override the runtime class and selector keys and adds tolerations', () => {
    expect(
      mergePlacement(
        {
          runtimeClassName: 'runc',
          nodeSelector: { pool: 'desktops', zone: 'a' },
          tolerations: [{ key: 'desktops', operator: 'Exists', effect: 'NoSchedule' }],
        },
        {
          runtimeClassName: 'gvisor',
          nodeSelector: { zone: 'b' },
          tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoExecute' }],
        },
      ),
    ).toEqual({
      runtimeClassName: 'gvisor',
      nodeSelector: { pool: 'desktops', zone: 'b' },
      tolerations: [
        { key: 'desktops', operator: 'Exists', effect: 'NoSchedule' },
        { key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoExecute' },
      ],
    });
  });
});

describe('parseLabelSelector', () => {
  it('reads equality terms', () => {
    expect(parseLabelSelector('app.kubernetes.io/name=cubicle, component==worker')).toEqual({
      'app.kubernetes.io/name': 'cubicle',
      component: 'worker',
    });
  });
  it('refuses set-based terms, negation and empty selectors', () => {
    expect(() => parseLabelSelector('component in (api,worker)')).toThrow();
    expect(() => parseLabelSelector('app!=x')).toThrow();
    expect(() => parseLabelSelector(' , ')).toThrow('empty');
  });
});

describe('placementFromPool', () => {
  it('is empty for pools without a kubernetes section', () => {
    expect(placementFromPool(null)).toEqual({});
    expect(placementFromPool(undefined)).toEqual({});
  });
  it('maps the API section (validated by the contract) to Kubernetes field names', () => {
    const spec = PoolSpec.parse({
      image: 'img',
      backend: 'kubernetes',
      kubernetes: {
        runtime_class_name: 'gvisor',
        node_selector: { 'cubicle.dev/desktops': 'true' },
        tolerations: [
          { key: 'desktops', operator: 'Exists', effect: 'NoSchedule' },
          { key: 'spot', value: 'yes', effect: 'NoExecute', toleration_seconds: 30 },
        ],
      },
    });
    expect(placementFromPool(spec.kubernetes)).toEqual({
      runtimeClassName: 'gvisor',
      nodeSelector: { 'cubicle.dev/desktops': 'true' },
      tolerations: [
        { key: 'desktops', operator: 'Exists', effect: 'NoSchedule' },
        {
          key: 'spot',
          operator: 'Equal',
          value: 'yes',
          effect: 'NoExecute',
          tolerationSeconds: 30,
        },
      ],
    });
  });
});
