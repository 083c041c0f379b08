import { describe, expect, it } from 'vitest';
import type { Pool } from '../resources.js';
import { parseArgs } from './args.js';
import { exitCodeOf } from './exit-codes.js';
import { CubicleError } from '../errors.js';
import { planChange, poolsOfFile, renderPlan } from './pools-file.js';

const current = {
  name: 'default',
  image: 'local',
  cpu: 1,
  autoscaling: { min: 1, initial: 1, max: 3 },
  env: {},
} as unknown as Pool;

describe('pools apply plan', () => {
  it('reads a name → spec mapping or a list of specs with names', () => {
    expect([...poolsOfFile('pools:\n  a:\n    image: local\n').keys()]).toEqual(['a']);
    expect(poolsOfFile('pools:\n- name: b\n  image: local\n').get('b')).toEqual({ image: 'local' });
    expect(() => poolsOfFile('pools: []')).toThrow(/names no pool/);
    expect(() => poolsOfFile('other: 1')).toThrow(/top-level `pools:`/);
  });

  it('compares only the fields the file sets, nested ones field by field', () => {
    expect(
      planChange('default', { image: 'local', autoscaling: { min: 1, max: 3 } } as never, current)
        .action,
    ).toBe('unchanged');
    const change = planChange(
      'default',
      { image: 'local', autoscaling: { min: 1, initial: 1, max: 5 } },
      current,
    );
    expect(change).toMatchObject({ action: 'update', fields: [{ field: 'autoscaling' }] });
    expect(planChange('new', { image: 'local' }, null).action).toBe('create');
    expect(renderPlan([change])).toContain(
      '~ pool default\n    autoscaling: {"min":1,"initial":1,"max":3} -> ',
    );
  });
});

describe('command line', () => {
  it('-f is a file for pools apply and "follow" elsewhere; -- ends the options', () => {
    expect(parseArgs(['pools', 'apply', '-f', 'p.yaml', '--yes']).options.get('f')).toBe('p.yaml');
    expect(parseArgs(['runs', 'logs', '-f', 'run_x']).positionals).toEqual([
      'runs',
      'logs',
      'run_x',
    ]);
    const shell = parseArgs(['shell', 'clm_x', '--', 'ls', '--json']);
    expect(shell.rest).toEqual(['ls', '--json']);
    expect(shell.options.has('json')).toBe(false);
    expect(() => parseArgs(['claim', 'default', '--ttl'])).toThrow(/--ttl needs a value/);
  });

  it('maps failures to the documented exit codes', () => {
    const err = (status: number, code = 'conflict') =>
      new CubicleError({ code: code as never, message: 'x', status });
    expect(
      [401, 403, 404, 410, 400, 409, 429, 500, 502, 503, 504, 0].map((s) => exitCodeOf(err(s))),
    ).toEqual([3, 3, 4, 4, 5, 5, 5, 1, 6, 6, 6, 6]);
    expect(exitCodeOf(new Error('bug'))).toBe(1);
  });
});
