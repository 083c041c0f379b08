// Request values from the published OpenAPI document (JSON Schema 2020-12, as the contract
// generates it): mostly valid, with hostile strings and wrong types mixed in, so a fuzz run
// reaches the handlers and the database and not only the validators.
import fc from 'fast-check';

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  default?: unknown;
};

/**
 * HOSTILE_STRINGS are the inputs that broke the API before (NUL, unpaired surrogates, empty
 * strings, SQL and path fragments, oversized strings): they stay in every run's mix.
 */
export const HOSTILE_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ud83d\ude00',
  "x'; DROP TABLE claims; --",
  '../../../etc/passwd',
  '%00',
  '\u202e\u200b',
  ' ',
  'null',
  '-1',
  '1e309',
  'a'.repeat(5000),
];

/** hostileString mixes the known hostile strings with any UTF-16 code units (lone surrogates included). */
export const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string16bits({ maxLength: 40 }),
  fc.fullUnicodeString({ maxLength: 40 }),
);

/** hostileValue is any JSON-ish value of the wrong kind for most fields. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, [], {}),
  fc.array(hostileString, { maxLength: 3 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
);

const MAX_DEPTH = 8;

/** schemaArbitrary builds values for a schema of the document; `hostility` weighs bad strings in. */
export function schemaArbitrary(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  depth = 0,
): fc.Arbitrary<unknown> {
  if (depth > MAX_DEPTH) return fc.constant(null);
  const next = (s: JsonSchema) => schemaArbitrary(s, components, depth + 1);
  if (schema.$ref) {
    const id = schema.$ref.replace('#/components/schemas/', '');
    const target = components[id];
    return target ? schemaArbitrary(target, components, depth + 1) : hostileValue;
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union && union.length > 0) return fc.oneof(...union.map(next));
  if (schema.allOf && schema.allOf.length > 0) return next(schema.allOf[0]!);
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type) => next({ ...schema, type })));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numberArbitrary(schema);
    case 'string':
      return fc.oneof(
        { weight: 4, arbitrary: stringArbitrary(schema) },
        { weight: 1, arbitrary: hostileString },
      );
    case 'array':
      return fc.array(schema.items ? next(schema.items) : hostileValue, {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.min(schema.maxItems ?? 4, 4),
      });
    case 'object':
    case undefined:
      return objectArbitrary(schema, next);
    default:
      return hostileValue;
  }
}

function numberArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum ?? -1_000_000) + 1;
  const max = schema.maximum ?? (schema.exclusiveMaximum ?? 1_000_000) - 1;
  const lo = Math.max(Math.ceil(min), -(2 ** 31));
  const hi = Math.min(Math.floor(max), 2 ** 31);
  if (schema.type === 'number' && schema.multipleOf)
    return fc
      .integer({ min: Math.ceil(lo / schema.multipleOf), max: Math.floor(hi / schema.multipleOf) })
      .map((n) => Number((n * schema.multipleOf!).toFixed(6)));
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: lo, max: Math.max(lo, hi) }) },
    { weight: 1, arbitrary: fc.constantFrom(lo - 1, hi + 1, 0, -1, 0.5) },
  );
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'date-time')
    return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  if (schema.pattern) {
    try {
      const maxLength = schema.maxLength ?? Infinity;
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length <= maxLength && s.length >= (schema.minLength ?? 0));
    } catch {
      // A pattern the generator cannot read: plain strings exercise the validator instead.
    }
  }
  return fc.string({
    minLength: schema.minLength ?? 0,
    maxLength: Math.max(schema.minLength ?? 0, Math.min(schema.maxLength ?? 30, 30)),
  });
}

function objectArbitrary(
  schema: JsonSchema,
  next: (s: JsonSchema) => fc.Arbitrary<unknown>,
): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const fixed = fc.record(Object.fromEntries(Object.entries(props).map(([k, s]) => [k, next(s)])), {
    requiredKeys: (schema.required ?? []).filter((k) => k in props),
  });
  if (typeof schema.additionalProperties !== 'object') return fixed;
  const keys = schema.propertyNames ? next(schema.propertyNames) : hostileString;
  const extra = fc.dictionary(
    keys.filter((k): k is string => typeof k === 'string'),
    next(schema.additionalProperties),
    { maxKeys: 4 },
  );
  return fc.tuple(fixed, extra).map(([a, b]) => ({ ...b, ...(a as object) }));
}

/**
 * withOneFieldReplaced takes a valid-looking value and replaces one field (at any depth) by a
 * hostile value: near-valid input is what gets past validation into the handlers.
 */
export function withOneFieldReplaced(value: unknown, replacement: unknown, pick: number): unknown {
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (Array.isArray(v)) v.forEach((item, i) => walk(item, [...path, i]));
    else if (v && typeof v === 'object')
      for (const [k, item] of Object.entries(v)) {
        paths.push([...path, k]);
        walk(item, [...path, k]);
      }
    if (Array.isArray(v)) v.forEach((_item, i) => paths.push([...path, i]));
  };
  walk(value, []);
  if (paths.length === 0) return replacement;
  const path = paths[pick % paths.length]!;
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1)!] = replacement;
  return copy;
}
