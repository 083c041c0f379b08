import { describe, expect, it } from 'vitest';
import type { Pool } from '../resources.js';
import { exitCodeOf } from './exit-codes.js';
import { CubicleError } from '../errors.js';
import {
  planChange,
  poolEntriesOf,
  PoolsFileError,
  readPoolsFile,
  renderPlan,
} from './pools-file.js';

const current = {
  name: 'default',
  image: 'local',
  backend: 'local',
  cpu: 1,
  memory_mb: 2048,
  autoscaling: { min: 1, initial: 1, max: 3 },
  claim_ttl_seconds: 900,
  max_claim_lifetime_seconds: 86_400,
  idle_timeout_seconds: null,
  idle_pause_seconds: null,
  env: { MODE: 'fast' },
  kubernetes: null,
  prime: null,
  egress: null,
  recording: null,
  profile_paths: null,
} as unknown as Pool;

async function problemsOf(text: string): Promise<string[]> {
  try {
    await readPoolsFile(text);
  } catch (error) {
    expect(error).toBeInstanceOf(PoolsFileError);
    return (error as PoolsFileError).problems;
  }
  throw new Error('the file was accepted');
}

describe('pools file', () => {
  it('reads a name → spec mapping or a list of specs with names', () => {
    expect(poolEntriesOf('pools:\n  a:\n    image: local\n').map(([n]) => n)).toEqual(['a']);
    expect(poolEntriesOf('pools:\n- name: b\n  image: local\n')).toEqual([
      ['b', { image: 'local' }],
    ]);
    expect(() => poolEntriesOf('pools: []')).toThrow(/names no pool/);
    expect(() => poolEntriesOf('other: 1')).toThrow(/top-level `pools:`/);
    expect(() => poolEntriesOf('pools:\n  a: {image: local}\nextra: 1\n')).toThrow(
      /unknown top-level key extra/,
    );
  });

  it('refuses YAML a hand parser used to accept: an unclosed flow list, a duplicate key', async () => {
    expect((await problemsOf('pools:\n  a:\n    image: local\n    x: [1,\n'))[0]).toMatch(
      /^YAML: /,
    );
    expect((await problemsOf('pools:\n  a: {image: local}\n  a: {image: other}\n'))[0]).toMatch(
      /Map keys must be unique/,
    );
  });

  it('validates every pool against the contract and lists each field with its reason', async () => {
    const problems = await problemsOf(
      'pools:\n  good:\n    image: local\n  bad:\n    image: local\n    autoscaling: {min: 2, initial: 1, max: 3}\n    memory_mb: 1\n    colour: blue\n  Bad_Name:\n    image: local\n',
    );
    expect(problems).toEqual([
      'pool bad: memory_mb: Too small: expected number to be >=256',
      'pool bad: autoscaling.initial: must satisfy min ≤ initial ≤ max',
      'pool bad: (spec): Unrecognized key: "colour"',
      'pool Bad_Name: the name must be lower-case letters, digits and dashes',
    ]);
    expect(exitCodeOf(new PoolsFileError(problems))).toBe(2);
  });
});

describe('pools apply plan', () => {
  it('compares the whole desired state, defaults filled in, with the pool as it is', async () => {
    const [same] = await readPoolsFile(
      'pools:\n  default:\n    image: local\n    autoscaling: {min: 1, initial: 1, max: 3}\n    env: {MODE: fast}\n',
    );
    expect(planChange(same!, current).action).toBe('unchanged');
    // Leaving env out resets it to {}: the plan says so rather than "unchanged".
    const [reset] = await readPoolsFile(
      'pools:\n  default:\n    image: local\n    autoscaling: {min: 1, initial: 1, max: 5}\n',
    );
    const change = planChange(reset!, current);
    expect(change).toMatchObject({
      action: 'update',
      fields: [{ field: 'autoscaling' }, { field: 'env', from: { MODE: 'fast' }, to: {} }],
    });
    expect(planChange(reset!, null).action).toBe('create');
    const plan = renderPlan([change, planChange({ ...reset!, name: 'new' }, null)]);
    expect(plan).toContain('~ pool default\n    autoscaling: {"min":1,"initial":1,"max":3} -> ');
    expect(plan).toContain('+ pool new (new): ');
    expect(plan).toContain('plan: 1 to create, 1 to update, 0 unchanged');
  });
});

describe('exit codes', () => {
  it('maps failures to the documented exit codes', () => {
    const err = (status: number, code = 'conflict') =>
      new CubicleError({ code: code as never, message: 'x', status });
    expect(
      [401, 403, 404, 410, 400, 409, 429, 500, 502, 503, 504, 0].map((s) => exitCodeOf(err(s))),
    ).toEqual([3, 3, 4, 4, 5, 5, 5, 1, 6, 6, 6, 6]);
    expect(exitCodeOf(new Error('bug'))).toBe(1);
  });
});
