/** AxisUnit: axis values are divided by `size` and labelled `<number> <name>`. */
export interface AxisUnit {
  name: string;
  size: number;
}

/** Seconds shown as s, min or h: the usage axes' units, smallest first. */
export const DURATION_UNITS: readonly AxisUnit[] = [
  { name: 's', size: 1 },
  { name: 'min', size: 60 },
  { name: 'h', size: 3600 },
];

/**
 * axisUnitFor picks one unit for a whole axis: the largest whose size the axis maximum reaches
 * at least twice (so a 90 s peak reads 0–90 s, not 0–1.5 min), else the smallest.
 */
export function axisUnitFor(max: number, units: readonly AxisUnit[]): AxisUnit {
  let chosen = units[0]!;
  for (const unit of units) if (max >= 2 * unit.size) chosen = unit;
  return chosen;
}
