import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { isBinaryBody, type RouteDef } from '../api/route-def.js';
import { Routes } from '../api/routes.js';
import { buildOpenApi } from './build-openapi.js';

type Media = { example?: unknown };
type Op = {
  operationId: string;
  parameters: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};

describe('examples in the OpenAPI document', () => {
  const doc = buildOpenApi('test') as {
    paths: Record<string, Record<string, Op>>;
    info: { description: string };
  };
  const ops = new Map(
    Object.values(doc.paths).flatMap((byMethod) =>
      Object.values(byMethod).map((op) => [op.operationId, op]),
    ),
  );

  it('every operation has an example request and response that its own schemas accept', () => {
    const problems: string[] = [];
    const check = (where: string, schema: z.ZodType, value: unknown) => {
      const parsed = schema.safeParse(value);
      if (!parsed.success)
        problems.push(
          `${where}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
        );
    };
    for (const route of Object.values(Routes) as RouteDef[]) {
      const op = ops.get(route.operationId)!;
      const params = Object.fromEntries(
        op.parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.example]),
      );
      if (route.params) check(`${route.operationId} params`, route.params, params);
      if (route.body) {
        const example = op.requestBody?.content['application/json']?.example;
        if (example === undefined) problems.push(`${route.operationId}: no request example`);
        else check(`${route.operationId} body`, route.body, example);
      }
      let answered = false;
      for (const [status, schema] of Object.entries(route.responses)) {
        if (schema === null || isBinaryBody(schema)) {
          answered = true; // no content, or raw bytes: nothing to exemplify in JSON
          continue;
        }
        const example = op.responses[status]?.content?.['application/json']?.example;
        if (example === undefined)
          problems.push(`${route.operationId} ${status}: no response example`);
        else {
          answered = true;
          check(`${route.operationId} ${status}`, schema as z.ZodType, example);
        }
      }
      if (!answered) problems.push(`${route.operationId}: no response example`);
    }
    expect(problems).toEqual([]);
  });

  it('the description carries the error code table', () => {
    expect(doc.info.description).toContain('| Code | Status | Meaning |');
    expect(doc.info.description).toContain('| `rate_limited` | 429 |');
  });
});
