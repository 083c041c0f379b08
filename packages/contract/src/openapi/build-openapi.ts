import { z } from 'zod';
import { ErrorCodes, type ErrorCodeName } from '../errors/codes.js';
import { ErrorEnvelope } from '../errors/envelope.js';
import { namedSchemas } from '../registry.js';
import { API_VERSION } from '../api/system.js';
import {
  bodyLimitOf,
  DEFAULT_BODY_LIMIT_BYTES,
  isBinaryBody,
  type RouteDef,
  type SocketRouteDef,
} from '../api/route-def.js';
import { Routes, SocketRoutes } from '../api/routes.js';
import { errorCodeTable, publishTextRule, RULES_SECTION } from './document-prose.js';
import { addExamples } from './examples.js';

type JsonSchema = Record<string, unknown>;
const REF = '#/components/schemas/';
const INPUT_MARK = '__input';

/**
 * convert turns registered schemas plus route-local ones into JSON Schemas that reference each
 * other by component id. Route-local schemas get synthetic ids and are pulled out afterwards.
 */
function convert(extra: [string, z.ZodType][], io: 'input' | 'output', mark: string) {
  const registry = z.registry<{ id: string; description?: string }>();
  for (const entry of namedSchemas) {
    registry.add(
      entry.schema,
      entry.description ? { id: entry.id, description: entry.description } : { id: entry.id },
    );
  }
  for (const [id, schema] of extra) if (!registry.has(schema)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: publishTextRule,
    uri: (id) => `${REF}${id}${mark}`,
  });
  const idOf = (schema: z.ZodType) => registry.get(schema)?.id;
  return { schemas: out.schemas as Record<string, JsonSchema>, idOf };
}

/** reachable follows `$ref`s from the roots and returns every component id it meets. */
function reachable(schemas: Record<string, JsonSchema>, roots: string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id) || !schemas[id]) continue;
    seen.add(id);
    for (const m of JSON.stringify(schemas[id]).matchAll(
      /"\$ref":"#\/components\/schemas\/([A-Za-z0-9_]+)"/g,
    ))
      stack.push(m[1]!);
  }
  return seen;
}

function stripSchemaKeys(s: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, ...rest } = s;
  return rest;
}

/** routeLocalSchemas gives every inline request/response schema of every route a stable id. */
function routeLocalSchemas(routes: RouteDef[], sockets: SocketRouteDef[]) {
  const inputs: [string, z.ZodType][] = [];
  const outputs: [string, z.ZodType][] = [];
  for (const r of sockets) {
    const base = r.operationId[0]!.toUpperCase() + r.operationId.slice(1);
    if (r.params) inputs.push([`${base}Params`, r.params]);
    if (r.query) inputs.push([`${base}Query`, r.query]);
    if (r.frames === 'json') outputs.push([`${base}Message`, r.serverMessage]);
  }
  for (const r of routes) {
    const base = r.operationId[0]!.toUpperCase() + r.operationId.slice(1);
    if (r.params) inputs.push([`${base}Params`, r.params]);
    if (r.query) inputs.push([`${base}Query`, r.query]);
    if (r.headers) inputs.push([`${base}Headers`, r.headers]);
    if (r.body) inputs.push([`${base}Body`, r.body]);
    for (const [status, schema] of Object.entries(r.responses)) {
      if (schema && !isBinaryBody(schema)) outputs.push([`${base}Response${status}`, schema]);
    }
  }
  return { inputs, outputs };
}

function parametersOf(schema: JsonSchema | undefined, where: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => ({
    name:
      where === 'header'
        ? name.replace(/(^|-)([a-z])/g, (_m, d: string, c: string) => d + c.toUpperCase())
        : name,
    in: where,
    required: where === 'path' ? true : required.has(name),
    schema: s,
  }));
}

function errorResponses(codes: ErrorCodeName[]) {
  const byStatus = new Map<number, ErrorCodeName[]>();
  for (const code of [...codes, 'internal_error' as const]) {
    const status = ErrorCodes[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.map((c) => `\`${c}\``).join(', '),
          content: { 'application/json': { schema: { $ref: `${REF}ErrorEnvelope` } } },
        },
      ]),
  );
}

/**
 * buildOpenApi generates the OpenAPI 3.1 document of REST v1 from the contract alone. Inputs and
 * outputs are converted separately (defaults make fields optional on input, present on output);
 * a component whose input form differs is published a second time as `<Id>Input`.
 */
export function buildOpenApi(version: string): Record<string, unknown> {
  const routes = Object.values(Routes) as RouteDef[];
  const sockets = Object.values(SocketRoutes) as SocketRouteDef[];
  void ErrorEnvelope; // registered on import; referenced by every error response
  const local = routeLocalSchemas(routes, sockets);
  const outputConv = convert(local.outputs, 'output', '');
  const inputConv = convert(local.inputs, 'input', INPUT_MARK);

  // A component reachable from some response keeps its output form under its plain id (and, when
  // defaults make its input form differ, the input form is `<Id>Input`); a component only ever
  // sent by clients is published in its input form under its plain id.
  const output: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(outputConv.schemas))
    output[id] = stripSchemaKeys(schema);
  const responseRoots = [
    'ErrorEnvelope',
    ...local.outputs.map(([id, schema]) => outputConv.idOf(schema) ?? id),
  ];
  const usedByResponses = reachable(output, responseRoots);

  const components: Record<string, JsonSchema> = {};
  for (const id of usedByResponses) components[id] = output[id]!;
  const renames = new Map<string, string>();
  for (const [id, schema] of Object.entries(inputConv.schemas)) {
    const input = stripSchemaKeys(schema);
    const sameAsOutput =
      output[id] !== undefined &&
      JSON.stringify(input).replaceAll(INPUT_MARK, '') === JSON.stringify(output[id]);
    renames.set(id, !usedByResponses.has(id) || sameAsOutput ? id : `${id}Input`);
  }
  const fixRefs = (s: JsonSchema): JsonSchema =>
    JSON.parse(
      JSON.stringify(s).replace(
        new RegExp(`${REF}([A-Za-z0-9_]+)${INPUT_MARK}`, 'g'),
        (_m, id: string) => `${REF}${renames.get(id) ?? id}`,
      ),
    ) as JsonSchema;
  const usedByRequests = reachable(
    Object.fromEntries(
      Object.entries(inputConv.schemas).map(([id, s]) => [
        id,
        JSON.parse(JSON.stringify(s).replaceAll(INPUT_MARK, '')) as JsonSchema,
      ]),
    ),
    local.inputs.map(([id, schema]) => inputConv.idOf(schema) ?? id),
  );
  for (const [id, schema] of Object.entries(inputConv.schemas)) {
    const target = renames.get(id)!;
    if (components[target] === undefined && (usedByRequests.has(id) || !usedByResponses.has(id))) {
      components[target] = fixRefs(stripSchemaKeys(schema));
    }
  }

  const inputSchemas = Object.fromEntries(
    Object.entries(inputConv.schemas).map(([id, schema]) => [id, fixRefs(stripSchemaKeys(schema))]),
  );
  // A params/query/headers object shared by several routes was registered under the first one's id.
  const inline = (schema: z.ZodType | undefined) =>
    schema ? inputSchemas[inputConv.idOf(schema)!] : undefined;
  /** What every operation says first, REST route or WebSocket: names, auth, parameters. */
  const operationHead = (r: RouteDef | SocketRouteDef) => ({
    operationId: r.operationId,
    summary: r.summary,
    ...(r.description ? { description: r.description } : {}),
    tags: [r.tag],
    security: r.auth === 'none' ? [] : [{ bearerAuth: [] }],
    parameters: [
      ...parametersOf(inline(r.params), 'path'),
      ...parametersOf(inline(r.query), 'query'),
      ...('headers' in r ? parametersOf(inline(r.headers), 'header') : []),
    ],
  });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const base = r.operationId[0]!.toUpperCase() + r.operationId.slice(1);
    const bodyId = r.body ? (inputConv.idOf(r.body) ?? `${base}Body`) : undefined;
    const op: Record<string, unknown> = {
      ...operationHead(r),
      ...(bodyId && r.body
        ? {
            requestBody: {
              // A body whose every field is optional may be left out (the server reads none as
              // `{}`); JSON `null` is never an object and is 400.
              required: !r.body.safeParse({}).success,
              description: `JSON, at most ${bodyLimitOf(r)} bytes (larger is 413 \`payload_too_large\`).`,
              content: {
                'application/json': { schema: { $ref: `${REF}${renames.get(bodyId) ?? bodyId}` } },
              },
            },
          }
        : {}),
      responses: {
        ...Object.fromEntries(
          Object.entries(r.responses).map(([status, schema]) => {
            if (!schema) return [status, { description: 'No content' }];
            if (isBinaryBody(schema))
              return [
                status,
                {
                  description: 'OK (raw bytes)',
                  content: {
                    [schema.mediaType]: {
                      schema: { type: 'string', contentMediaType: schema.mediaType },
                    },
                  },
                },
              ];
            const id = outputConv.idOf(schema) ?? `${base}Response${status}`;
            return [
              status,
              {
                description: 'OK',
                content: { 'application/json': { schema: { $ref: `${REF}${id}` } } },
              },
            ];
          }),
        ),
        ...errorResponses(r.errors),
      },
    };
    if (r.auth === 'admin') op['x-cubicle-role'] = 'admin';
    // Rules between query parameters (e.g. usage's from < to) live on the query object, which is
    // inlined as parameters: the operation carries them.
    const queryRules = inline(r.query)?.['x-cubicle-rules'];
    if (queryRules) op['x-cubicle-query-rules'] = queryRules;
    // GET requests carry no body (the server does not read one); every other method's limit is published.
    if (r.method !== 'GET') op['x-cubicle-max-body-bytes'] = bodyLimitOf(r);
    paths[r.path] = { ...(paths[r.path] ?? {}), [r.method.toLowerCase()]: op };
  }

  // OpenAPI has no WebSocket operation: each is published as a GET that upgrades (101), apart
  // from `paths`, with the schema of its server's frames and its close codes.
  const websockets: Record<string, Record<string, unknown>> = {};
  for (const r of sockets) {
    const base = r.operationId[0]!.toUpperCase() + r.operationId.slice(1);
    // A JSON socket names its frames' schema; a binary one its subprotocol and what it carries.
    const frames =
      r.frames === 'json'
        ? {
            'x-cubicle-message': {
              $ref: `${REF}${outputConv.idOf(r.serverMessage) ?? `${base}Message`}`,
            },
          }
        : { 'x-cubicle-subprotocol': r.subprotocol, 'x-cubicle-frames': r.protocol };
    websockets[r.path] = {
      get: {
        ...operationHead(r),
        responses: {
          '101': { description: 'Switching Protocols: the WebSocket is open' },
          ...errorResponses(r.errors),
        },
        ...frames,
        'x-cubicle-close-codes': r.closeCodes,
      },
    };
  }

  // Params, query and header holders were only a means to convert; they are inlined above.
  for (const r of [...routes, ...sockets] as Pick<RouteDef, 'params' | 'query' | 'headers'>[]) {
    for (const holder of [r.params, r.query, r.headers]) {
      const id = holder ? inputConv.idOf(holder) : undefined;
      if (id) {
        delete components[id];
        delete components[`${id}Input`];
      }
    }
  }
  const sorted = Object.fromEntries(
    Object.entries(components).sort(([a], [b]) => a.localeCompare(b)),
  );
  const errorsByOperation = new Map(routes.map((r) => [r.operationId, r.errors]));
  addExamples(paths, sorted, (id) => errorsByOperation.get(id) ?? []);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Cubicle API',
      version,
      description:
        'Hosted control plane for computer-use sandboxes. Errors always use `ErrorEnvelope`; ' +
        `request bodies are at most \`x-cubicle-max-body-bytes\` bytes per operation (${DEFAULT_BODY_LIMIT_BYTES} unless stated); larger ones are 413 \`payload_too_large\`.\n\n` +
        RULES_SECTION +
        errorCodeTable(),
    },
    // Relative: the server that serves this document (the reference's "Try it out" works on any
    // host and port); generated clients take their base URL from configuration. Schemas are JSON
    // Schema 2020-12, OpenAPI 3.1's default dialect, so `jsonSchemaDialect` is left out.
    servers: [{ url: '/', description: 'The server that serves this document' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    'x-cubicle-websockets': websockets,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: `API key (${API_VERSION})` },
      },
      schemas: sorted,
    },
  };
}
