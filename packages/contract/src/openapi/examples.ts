import { ErrorCodes, type ErrorCodeName } from '../errors/codes.js';
import { FALLBACK_WORDS, FIELD_EXAMPLES, REQUEST_EXAMPLES } from './example-values.js';

type JsonSchema = Record<string, unknown>;

/** A valid ULID body for example ids (lowercase Crockford base32: no i, l, o, u). */
const ULID = '01jd8x3m4k6z9q2w5e7r1t3y5v';

/**
 * exampleOf builds an example value from a JSON Schema of the document: curated values by field
 * name, then defaults and enums, ids from their prefix pattern, the smallest allowed numbers.
 * With `request`, optional fields appear only when they have a curated value: an example shows
 * what a caller typically sends, not every knob.
 */
export function exampleOf(
  schema: JsonSchema | undefined,
  components: Record<string, JsonSchema>,
  options: { request: boolean; field?: string; depth?: number } = { request: false },
): unknown {
  const depth = options.depth ?? 0;
  const field = options.field ?? '';
  if (!schema || depth > 12) return null;
  const next = (s: JsonSchema | undefined, f = field) =>
    exampleOf(s, components, { request: options.request, field: f, depth: depth + 1 });
  if (typeof schema.$ref === 'string') {
    const target = components[schema.$ref.split('/').pop()!];
    return next(target === undefined ? undefined : { ...target, ...withoutRef(schema) });
  }
  if ('const' in schema) return schema.const;
  const curated = (FIELD_EXAMPLES[field] ?? []).find((v) => fits(v, schema, components));
  if (curated !== undefined) return structuredClone(curated);
  // A null default of an output field is the server's, not an example worth showing.
  if ('default' in schema && schema.default !== undefined && schema.default !== null)
    return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as JsonSchema[] | undefined;
    if (options) return next(options.find((o) => o.type !== 'null') ?? options[0]);
  }
  const type = typeOf(schema);
  switch (type) {
    case 'object':
      return objectExample(schema, next, options.request);
    case 'array': {
      if ((schema.maxItems as number | undefined) === 0) return [];
      return [next(schema.items as JsonSchema)];
    }
    case 'string':
      return stringExample(schema);
    case 'integer':
    case 'number':
      return numberExample(schema);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function withoutRef(schema: JsonSchema): JsonSchema {
  const { $ref: _ref, ...rest } = schema;
  return rest;
}

function typeOf(schema: JsonSchema): string | undefined {
  return Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== 'null')
    : (schema.type as string | undefined);
}

/** patternsOf lists a string schema's patterns: its own and those of an allOf of patterns. */
function patternsOf(schema: JsonSchema): RegExp[] {
  const all = [schema, ...((schema.allOf as JsonSchema[] | undefined) ?? [])];
  return all
    .map((s) => s.pattern)
    .filter((p): p is string => typeof p === 'string')
    .map((p) => new RegExp(p));
}

/** fits tells whether a curated value suits a schema closely enough to be tried (the test checks it exactly). */
function fits(value: unknown, schema: JsonSchema, components: Record<string, JsonSchema>): boolean {
  if (typeof schema.$ref === 'string') {
    const target = components[schema.$ref.split('/').pop()!];
    return target !== undefined && fits(value, target, components);
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as JsonSchema[] | undefined;
    if (options) return options.some((o) => fits(value, o, components));
  }
  if (Array.isArray(schema.enum)) return schema.enum.includes(value);
  const type = typeOf(schema);
  if (typeof value === 'string') {
    if (type !== 'string') return false;
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) return false;
    return (
      patternsOf(schema).every((p) => p.test(value)) &&
      value.length >= ((schema.minLength as number | undefined) ?? 0) &&
      value.length <= ((schema.maxLength as number | undefined) ?? Infinity)
    );
  }
  if (typeof value === 'number')
    return (
      (type === 'integer' ? Number.isInteger(value) : type === 'number') &&
      value >= ((schema.minimum as number | undefined) ?? -Infinity) &&
      value <= ((schema.maximum as number | undefined) ?? Infinity)
    );
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return type === 'array' && (!items || value.every((v) => fits(v, items, components)));
  }
  if (value && typeof value === 'object') return type === 'object';
  return false;
}

function objectExample(
  schema: JsonSchema,
  next: (s: JsonSchema | undefined, field?: string) => unknown,
  request: boolean,
) {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = {};
  const required = new Set((schema.required ?? []) as string[]);
  for (const [name, prop] of Object.entries(props)) {
    if (request && !required.has(name) && FIELD_EXAMPLES[name] === undefined) continue;
    const value = next(prop, name);
    // An optional field with nothing to show is left out rather than sent as null.
    if (value !== null || required.has(name)) out[name] = value;
  }
  if (Object.keys(props).length === 0 && schema.additionalProperties && schema.propertyNames) {
    // A map without a curated value: one entry keyed by a name its key pattern accepts.
    const key = stringExample(schema.propertyNames as JsonSchema);
    out[key] = next(schema.additionalProperties as JsonSchema, '');
  }
  return out;
}

function stringExample(schema: JsonSchema): string {
  if (schema.contentEncoding === 'base64' || schema.format === 'base64') return 'iVBORw0KGgo=';
  if (schema.format === 'date-time') return '2026-11-01T12:00:00.000Z';
  if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/';
  const prefix = /^\^([a-z]+)_\[0-9a-hjkmnp-tv-z\]\{26\}\$$/.exec(String(schema.pattern ?? ''));
  if (prefix) return `${prefix[1]}_${ULID}`;
  const patterns = patternsOf(schema);
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const ok = (s: string) =>
    patterns.every((p) => p.test(s)) &&
    s.length >= minLength &&
    s.length <= ((schema.maxLength as number | undefined) ?? Infinity);
  return FALLBACK_WORDS.find(ok) ?? 'x'.repeat(Math.max(1, minLength));
}

function numberExample(schema: JsonSchema): number {
  const min = schema.minimum as number | undefined;
  const exclusive = schema.exclusiveMinimum as number | undefined;
  let value = min !== undefined ? Math.max(min, 1) : 1;
  if (exclusive !== undefined && value <= exclusive) value = exclusive + 1;
  return Math.min(value, (schema.maximum as number | undefined) ?? Infinity);
}

/** The first error code of each status an operation can answer, as an example envelope. */
function errorExample(code: ErrorCodeName) {
  return {
    summary: code,
    value: {
      error: {
        code,
        message: ErrorCodes[code].description,
        request_id: 'req_3f1c2a9e-8d4b-4f0a-9c1e-2b7d5a6e8f10',
      },
    },
  };
}

type Media = { schema?: JsonSchema; example?: unknown; examples?: Record<string, unknown> };
type Operation = {
  operationId: string;
  parameters?: { required?: boolean; schema?: JsonSchema; example?: unknown; name: string }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
};

/**
 * addExamples gives every operation of the document examples: its required parameters (optional
 * ones stay empty, so "Try it out" sends only what the caller types), its JSON body, each
 * successful JSON answer, and each error status with one example per code the operation declares.
 */
export function addExamples(
  paths: Record<string, Record<string, unknown>>,
  components: Record<string, JsonSchema>,
  errorsOf: (operationId: string) => ErrorCodeName[],
) {
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops) as Operation[]) {
      for (const param of op.parameters ?? []) {
        if (param.required)
          param.example = exampleOf(param.schema, components, {
            request: true,
            field: param.name,
          });
      }
      const body = op.requestBody?.content['application/json'];
      if (body)
        body.example =
          REQUEST_EXAMPLES[op.operationId] ?? exampleOf(body.schema, components, { request: true });
      const codes = [...errorsOf(op.operationId), 'internal_error' as const];
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json'];
        if (!json) continue;
        if (status.startsWith('2')) json.example = exampleOf(json.schema, components);
        else
          json.examples = Object.fromEntries(
            codes
              .filter((c) => String(ErrorCodes[c].status) === status)
              .map((c) => [c, errorExample(c)]),
          );
      }
    }
  }
}
