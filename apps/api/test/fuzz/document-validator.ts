// The published document as a judge: a JSON Schema 2020-12 validator (ajv 8) over the committed
// openapi.json, answering "would a client that follows the document send this?" for each part
// of a request (path, query, headers, body), so a fuzz can tell document-valid requests from
// document-invalid ones without asking the server's own zod schemas.
import { createRequire } from 'node:module';
import type { JsonSchema } from './schema-arbitrary.js';

// ajv 8 with draft 2020-12 (apps/api's own devDependency: the hoisted `ajv` is eslint's ajv 6).
const require = createRequire(import.meta.url);
type Validate = ((value: unknown) => boolean) & {
  errors?: { instancePath: string; message?: string }[] | null;
};
type AjvInstance = {
  compile(schema: object): Validate;
  addKeyword(definition: object): unknown;
};
const Ajv2020 = (require('ajv/dist/2020') as { default: new (o: object) => AjvInstance }).default;
const addFormats = (require('ajv-formats') as { default: (ajv: AjvInstance) => void }).default;

export interface DocParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema & { 'x-cubicle-opaque'?: boolean };
  example?: unknown;
}

/** CrossFieldRule as the document's description defines `x-cubicle-rules` (read from there, not the contract). */
type CrossFieldRule =
  | { rule: 'less_or_equal' | 'less'; left: string; right: string }
  | { rule: 'max_span_days'; from: string; to: string; days: number; if?: Record<string, unknown> }
  | { rule: 'disjoint'; keys_of: string; items_of: string };

export interface DocOperation {
  operationId: string;
  tags: string[];
  parameters: DocParameter[];
  'x-cubicle-query-rules'?: CrossFieldRule[];
  'x-cubicle-max-body-bytes'?: number;
  requestBody?: {
    required?: boolean;
    content: { 'application/json': { schema: JsonSchema } };
  };
}

/** A request as a client builds it from the document: typed values before they go on the wire. */
export interface DocRequest {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  /** `undefined`: no body sent. */
  body: unknown;
}

/** documentJudge compiles one validator per part of each operation of the document. */
export function documentJudge(components: Record<string, JsonSchema>) {
  // strict: false — the document carries OpenAPI keywords (`example`, `x-…`, contentEncoding)
  // that are annotations, not assertions, in JSON Schema.
  // multipleOfPrecision: `multipleOf: 0.001` means decimal multiples (63.989 is one), which
  // binary floating point cannot divide exactly.
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    validateFormats: true,
    multipleOfPrecision: 9,
  });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'x-cubicle-rules',
    type: 'object',
    schemaType: 'array',
    validate: (rules: CrossFieldRule[], data: Record<string, unknown>, parent: JsonSchema) =>
      rules.every((rule) => holds(rule, data, parent)),
  });
  const compile = (schema: object) =>
    ajv.compile({ ...schema, components: { schemas: components } });

  const partSchema = (params: DocParameter[], rules?: CrossFieldRule[]) => ({
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required).map((p) => p.name),
    ...(rules ? { 'x-cubicle-rules': rules } : {}),
  });

  return (op: DocOperation) => {
    const parts = (['path', 'query', 'header'] as const).map((where) =>
      compile(
        partSchema(
          op.parameters.filter((p) => p.in === where),
          where === 'query' ? op['x-cubicle-query-rules'] : undefined,
        ),
      ),
    );
    const body = op.requestBody
      ? compile(op.requestBody.content['application/json'].schema)
      : undefined;
    /** why says what makes the request invalid per the document, or undefined when it is valid. */
    return function why(request: DocRequest): string | undefined {
      const values = [request.path, request.query, request.headers];
      for (const [i, validate] of parts.entries()) {
        if (!validate(values[i])) return `${['path', 'query', 'header'][i]}: ${describe(validate)}`;
      }
      if (request.body === undefined) {
        return op.requestBody?.required ? 'body: required' : undefined;
      }
      if (!body) return 'body: the operation takes none';
      if (!body(request.body)) return `body: ${describe(body)}`;
      const bytes = Buffer.byteLength(JSON.stringify(request.body));
      if (bytes > (op['x-cubicle-max-body-bytes'] ?? Infinity)) return `body: ${bytes} bytes`;
      return undefined;
    };
  };
}

function describe(validate: Validate): string {
  const e = validate.errors?.[0];
  return e ? `${e.instancePath || '/'} ${e.message ?? ''}` : 'invalid';
}

/** holds evaluates one `x-cubicle-rules` entry; a field left out counts as its default. */
function holds(rule: CrossFieldRule, data: Record<string, unknown>, schema: JsonSchema): boolean {
  const valueOf = (name: string) =>
    name in data ? data[name] : schema.properties?.[name]?.default;
  const scalar = (v: unknown) =>
    typeof v === 'string' ? Date.parse(v) : (v as number | undefined);
  switch (rule.rule) {
    case 'less':
    case 'less_or_equal': {
      const [l, r] = [scalar(valueOf(rule.left)), scalar(valueOf(rule.right))];
      if (l === undefined || r === undefined) return true;
      return rule.rule === 'less' ? l < r : l <= r;
    }
    case 'max_span_days': {
      if (rule.if && !Object.entries(rule.if).every(([k, v]) => valueOf(k) === v)) return true;
      const [from, to] = [scalar(valueOf(rule.from)), scalar(valueOf(rule.to))];
      return from === undefined || to === undefined || to - from <= rule.days * 86_400_000;
    }
    case 'disjoint': {
      const keys = Object.keys((data[rule.keys_of] as object | undefined) ?? {});
      const items = (data[rule.items_of] as unknown[] | undefined) ?? [];
      return !keys.some((k) => items.includes(k));
    }
  }
}
