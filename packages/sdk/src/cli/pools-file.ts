import type { BodyOf } from '../operations.js';
import type { Pool } from '../resources.js';
import { UsageError } from './args.js';
import { parseYaml } from './yaml.js';

export type PoolSpec = BodyOf<'applyPool'>;

/**
 * poolsOfFile reads a pools file: `pools:` maps each pool name to its spec (the body of
 * `PUT /v1/pools/{name}`), or lists specs that carry a `name`. The API validates each spec.
 */
export function poolsOfFile(text: string): Map<string, PoolSpec> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new UsageError(`the pools file is not readable: ${(error as Error).message}`);
  }
  const pools = (doc as { pools?: unknown } | null)?.pools;
  const out = new Map<string, PoolSpec>();
  if (Array.isArray(pools)) {
    for (const entry of pools as Record<string, unknown>[]) {
      const { name, ...spec } = entry ?? {};
      if (typeof name !== 'string') throw new UsageError('every pool in the list needs a name');
      out.set(name, spec as PoolSpec);
    }
  } else if (pools && typeof pools === 'object') {
    for (const [name, spec] of Object.entries(pools)) out.set(name, (spec ?? {}) as PoolSpec);
  } else {
    throw new UsageError('the pools file needs a top-level `pools:` mapping (name: spec)');
  }
  if (out.size === 0) throw new UsageError('the pools file names no pool');
  return out;
}

/** PoolChange is one line of the plan `pools apply` shows before it applies. */
export type PoolChange =
  | { pool: string; action: 'create'; spec: PoolSpec }
  | {
      pool: string;
      action: 'update';
      spec: PoolSpec;
      fields: { field: string; from: unknown; to: unknown }[];
    }
  | { pool: string; action: 'unchanged'; spec: PoolSpec };

/**
 * planChange compares what the file asks with the pool as it is: only the fields the file sets
 * are compared (the server fills the others with defaults, as it would on apply).
 */
export function planChange(name: string, spec: PoolSpec, current: Pool | null): PoolChange {
  if (!current) return { pool: name, action: 'create', spec };
  const fields: { field: string; from: unknown; to: unknown }[] = [];
  for (const [field, wanted] of Object.entries(spec)) {
    const have = (current as unknown as Record<string, unknown>)[field];
    if (!sameValue(have, wanted)) fields.push({ field, from: have, to: wanted });
  }
  return fields.length === 0
    ? { pool: name, action: 'unchanged', spec }
    : { pool: name, action: 'update', spec, fields };
}

/** sameValue: objects match when every field the wanted side sets matches. */
function sameValue(have: unknown, wanted: unknown): boolean {
  if (wanted !== null && typeof wanted === 'object' && !Array.isArray(wanted)) {
    if (have === null || typeof have !== 'object') return false;
    const h = have as Record<string, unknown>;
    const w = wanted as Record<string, unknown>;
    return Object.keys(w).every((k) => sameValue(h[k], w[k]));
  }
  return JSON.stringify(have) === JSON.stringify(wanted);
}

/** renderPlan prints the plan as a diff: `+` new pool, `~` changed field, `=` unchanged. */
export function renderPlan(changes: PoolChange[]): string {
  const lines: string[] = [];
  for (const c of changes) {
    if (c.action === 'create') lines.push(`+ pool ${c.pool} (new): ${JSON.stringify(c.spec)}`);
    else if (c.action === 'unchanged') lines.push(`= pool ${c.pool} (unchanged)`);
    else {
      lines.push(`~ pool ${c.pool}`);
      for (const f of c.fields)
        lines.push(`    ${f.field}: ${JSON.stringify(f.from)} -> ${JSON.stringify(f.to)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
