import { describe, expect, it } from 'vitest';
import { axisUnitFor, DURATION_UNITS } from '../app/components/charts/axis-unit';

describe('axisUnitFor', () => {
  it('picks one unit for the whole axis: the largest its maximum reaches twice', () => {
    expect(axisUnitFor(0, DURATION_UNITS).name).toBe('s');
    expect(axisUnitFor(90, DURATION_UNITS).name).toBe('s');
    expect(axisUnitFor(120, DURATION_UNITS).name).toBe('min');
    expect(axisUnitFor(5400, DURATION_UNITS).name).toBe('min');
    expect(axisUnitFor(7200, DURATION_UNITS).name).toBe('h');
  });
});
