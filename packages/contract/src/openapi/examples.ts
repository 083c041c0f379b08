type JsonSchema = Record<string, unknown>;

/** A valid ULID body for example ids (lowercase Crockford base32: no i, l, o, u). */
const ULID = '01jd8x3m4k6z9q2w5e7r1t3y5v';
const WORDS = [
  '/home/user/notes.txt',
  'default',
  'example',
  'EXAMPLE_NAME',
  's1',
  's1:1',
  'p1',
  'claim.create',
  'whsec_c2VjcmV0LWV4YW1wbGU=',
  'a',
  // Sequence ids (viewer connections): digits only.
  '42',
];

/** Strings whose rule is a refinement (not a pattern) get a value by their field's name. */
const BY_FIELD: Record<string, string> = {
  url: 'https://example.com/hooks/cubicle',
  embed_origins: 'https://app.example.com',
  mode: '644',
};

/**
 * exampleOf builds an example value from a JSON Schema of the document: defaults and enums
 * first, ids from their prefix pattern, the smallest allowed numbers. Examples are derived, not
 * written, so they follow every schema change; the test parses each with the route's zod schema.
 */
export function exampleOf(
  schema: JsonSchema | undefined,
  components: Record<string, JsonSchema>,
  depth = 0,
  field = '',
): unknown {
  if (!schema || depth > 12) return null;
  if (typeof schema.$ref === 'string') {
    const id = schema.$ref.split('/').pop()!;
    return exampleOf(components[id], components, depth + 1, field);
  }
  if ('const' in schema) return schema.const;
  // A null default of an output field is the server's, not an example worth showing.
  if ('default' in schema && schema.default !== undefined && schema.default !== null)
    return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as JsonSchema[] | undefined;
    if (options) {
      const first = options.find((o) => o.type !== 'null') ?? options[0];
      return exampleOf(first, components, depth + 1, field);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign(
      {},
      ...(schema.allOf as JsonSchema[]).map((s) => exampleOf(s, components, depth + 1)),
    );
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== 'null')
    : (schema.type as string | undefined);
  switch (type) {
    case 'object':
      return objectExample(schema, components, depth);
    case 'array': {
      const item = exampleOf(schema.items as JsonSchema, components, depth + 1, field);
      return (schema.maxItems as number | undefined) === 0 ? [] : [item];
    }
    case 'string':
      return stringExample(schema, field);
    case 'integer':
    case 'number':
      return numberExample(schema);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return null;
  }
}

function objectExample(schema: JsonSchema, components: Record<string, JsonSchema>, depth: number) {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = {};
  const required = new Set((schema.required ?? []) as string[]);
  for (const [name, prop] of Object.entries(props)) {
    const value = exampleOf(prop, components, depth + 1, name);
    // An optional field with nothing to show is left out rather than sent as null.
    if (value !== null || required.has(name)) out[name] = value;
  }
  if (Object.keys(props).length === 0 && schema.additionalProperties && schema.propertyNames) {
    // A map (env, metadata): one entry keyed by a name its key pattern accepts.
    const key = stringExample(schema.propertyNames as JsonSchema);
    out[String(key)] = exampleOf(schema.additionalProperties as JsonSchema, components, depth + 1);
  }
  return out;
}

function stringExample(schema: JsonSchema, field = ''): string {
  if (schema.contentEncoding === 'base64' || schema.format === 'base64') return 'iVBORw0KGgo=';
  if (schema.format === 'date-time') return '2026-01-01T12:00:00.000Z';
  if (schema.format === 'uri' || schema.format === 'url')
    return 'https://example.com/hooks/cubicle';
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : null;
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const fits = (s: string) =>
    (!pattern || pattern.test(s)) &&
    s.length >= minLength &&
    s.length <= ((schema.maxLength as number | undefined) ?? Infinity);
  const prefix = /^\^([a-z]+)_\[0-9a-hjkmnp-tv-z\]\{26\}\$$/.exec(String(schema.pattern ?? ''));
  if (prefix) return `${prefix[1]}_${ULID}`;
  const byField = BY_FIELD[field];
  if (byField && fits(byField)) return byField;
  for (const word of WORDS) if (fits(word)) return word;
  return 'x'.repeat(Math.max(1, minLength));
}

function numberExample(schema: JsonSchema): number {
  const min = schema.minimum as number | undefined;
  const exclusive = schema.exclusiveMinimum as number | undefined;
  let value = min !== undefined ? Math.max(min, 1) : 1;
  if (exclusive !== undefined && value <= exclusive) value = exclusive + 1;
  return Math.min(value, (schema.maximum as number | undefined) ?? Infinity);
}

type Operation = {
  parameters?: { schema?: JsonSchema; example?: unknown }[];
  requestBody?: { content: Record<string, { schema?: JsonSchema; example?: unknown }> };
  responses: Record<
    string,
    { content?: Record<string, { schema?: JsonSchema; example?: unknown }> }
  >;
};

/**
 * addExamples gives every operation of the document an example request (parameters and JSON
 * body) and an example of each successful JSON answer, derived from their schemas.
 */
export function addExamples(
  paths: Record<string, Record<string, unknown>>,
  components: Record<string, JsonSchema>,
) {
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops) as Operation[]) {
      for (const param of op.parameters ?? []) param.example = exampleOf(param.schema, components);
      const body = op.requestBody?.content['application/json'];
      if (body) body.example = exampleOf(body.schema, components);
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json'];
        if (json && status.startsWith('2')) json.example = exampleOf(json.schema, components);
      }
    }
  }
}
