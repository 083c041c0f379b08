import { parseDocument } from 'yaml';
import type { BodyOf } from '../operations.js';
import type { Pool } from '../resources.js';
import { UsageError } from './args.js';

export type PoolSpec = BodyOf<'applyPool'>;

/** WantedPool is one pool of the file: the spec as written (sent) and with defaults (compared). */
export interface WantedPool {
  name: string;
  spec: PoolSpec;
  desired: Record<string, unknown>;
}

/** PoolsFileError lists every problem of a pools file, each naming the pool and the field. */
export class PoolsFileError extends UsageError {
  constructor(readonly problems: string[]) {
    super(`the pools file is invalid; nothing was changed:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * readPoolsFile parses the whole file and validates every pool against the contract's PoolSpec
 * before anything is sent, so a broken file or one invalid pool changes nothing. The file has
 * one top-level key, `pools:`, mapping each pool name to its spec (the body of
 * `PUT /v1/pools/{name}`), or listing specs that carry a `name`.
 */
export async function readPoolsFile(text: string): Promise<WantedPool[]> {
  const entries = poolEntriesOf(text);
  // The contract's schemas (and zod) load only here: the SDK itself never loads them.
  const { PoolSpec, ResourceName } = await import('./pool-schema.js');
  const problems: string[] = [];
  const wanted: WantedPool[] = [];
  for (const [name, spec] of entries) {
    const label = `pool ${name}`;
    if (!ResourceName.safeParse(name).success)
      problems.push(`${label}: the name must be lower-case letters, digits and dashes`);
    const parsed = PoolSpec.safeParse(spec);
    if (parsed.success) wanted.push({ name, spec: spec as PoolSpec, desired: parsed.data });
    else
      for (const issue of parsed.error.issues)
        problems.push(`${label}: ${issue.path.join('.') || '(spec)'}: ${issue.message}`);
  }
  if (problems.length > 0) throw new PoolsFileError(problems);
  return wanted;
}

/** poolEntriesOf reads the YAML and its shape (names and raw specs), without the contract. */
export function poolEntriesOf(text: string): [string, unknown][] {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0)
    throw new PoolsFileError(doc.errors.map((e) => `YAML: ${e.message.split('\n')[0]}`));
  const root: unknown = doc.toJS();
  if (root === null || typeof root !== 'object' || Array.isArray(root) || !('pools' in root))
    throw new PoolsFileError(['the file needs a top-level `pools:` mapping (name: spec)']);
  const extra = Object.keys(root).filter((k) => k !== 'pools');
  if (extra.length > 0)
    throw new PoolsFileError([`unknown top-level key ${extra.join(', ')} (only \`pools:\`)`]);
  const pools = (root as { pools: unknown }).pools;
  const entries: [string, unknown][] = [];
  if (Array.isArray(pools)) {
    for (const [i, entry] of pools.entries()) {
      const { name, ...spec } = (entry ?? {}) as Record<string, unknown>;
      if (typeof name !== 'string')
        throw new PoolsFileError([`pools[${i}]: every pool in the list needs a name`]);
      if (entries.some(([n]) => n === name))
        throw new PoolsFileError([`pool ${name}: named twice`]);
      entries.push([name, spec]);
    }
  } else if (pools !== null && typeof pools === 'object') {
    entries.push(...Object.entries(pools));
  } else {
    throw new PoolsFileError(['`pools:` must map each pool name to its spec']);
  }
  if (entries.length === 0) throw new PoolsFileError(['the file names no pool']);
  return entries;
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
 * planChange compares the pool as the file wants it, defaults filled in, with the pool as it is.
 * A spec is the whole desired state: a field the file leaves out goes back to its default, and
 * the plan shows that.
 */
export function planChange(wanted: WantedPool, current: Pool | null): PoolChange {
  const { name, spec, desired } = wanted;
  if (!current) return { pool: name, action: 'create', spec };
  const fields: { field: string; from: unknown; to: unknown }[] = [];
  for (const [field, to] of Object.entries(desired)) {
    const from = (current as unknown as Record<string, unknown>)[field];
    if (canonical(from) !== canonical(to)) fields.push({ field, from, to });
  }
  return fields.length === 0
    ? { pool: name, action: 'unchanged', spec }
    : { pool: name, action: 'update', spec, fields };
}

/** canonical is JSON with object keys sorted, so key order never counts as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
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
  const count = (a: PoolChange['action']) => changes.filter((c) => c.action === a).length;
  lines.push(
    `plan: ${count('create')} to create, ${count('update')} to update, ${count('unchanged')} unchanged`,
  );
  return `${lines.join('\n')}\n`;
}
