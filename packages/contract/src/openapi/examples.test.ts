import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { isBinaryBody, type RouteDef } from '../api/route-def.js';
import { Routes } from '../api/routes.js';
import { ErrorCodes, type ErrorCodeName } from '../errors/codes.js';
import { ErrorEnvelope } from '../errors/envelope.js';
import { buildOpenApi } from './build-openapi.js';

type Media = { example?: unknown; examples?: Record<string, { value: unknown }> };
type Op = {
  operationId: string;
  parameters: { name: string; in: string; required: boolean; example?: unknown }[];
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

  it('every error status has an example per code the operation declares, and no other code', () => {
    const problems: string[] = [];
    for (const route of Object.values(Routes) as RouteDef[]) {
      const op = ops.get(route.operationId)!;
      const declared = new Set<ErrorCodeName>([...route.errors, 'internal_error']);
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('2')) continue;
        const examples = Object.values(response.content?.['application/json']?.examples ?? {});
        const expected = [...declared].filter((c) => String(ErrorCodes[c].status) === status);
        const codes = examples.map((e) => ErrorEnvelope.parse(e.value).error.code);
        if (codes.sort().join() !== expected.sort().join())
          problems.push(`${route.operationId} ${status}: ${codes.join()} ≠ ${expected.join()}`);
        for (const code of codes)
          if (String(ErrorCodes[code].status) !== status || !declared.has(code))
            problems.push(`${route.operationId} ${status}: ${code} is not an answer it gives`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('fills only required parameters, so "Try it out" sends nothing the caller did not type', () => {
    for (const op of ops.values())
      for (const p of op.parameters)
        expect(p.example === undefined, `${op.operationId} ${p.name}`).toBe(!p.required);
    // The usage query's required from/to examples satisfy the query's own rules (from < to).
    const usage = ops.get('getUsage')!;
    const query = Object.fromEntries(usage.parameters.map((p) => [p.name, p.example]));
    expect(Routes.getUsage.query.safeParse(query).success).toBe(true);
  });

  it('shows values a person would send: a pool of a real image with real memory', () => {
    const pool = ops.get('applyPool')!.requestBody!.content['application/json']!.example as {
      image: string;
      memory_mb: number;
    };
    expect(pool.image).toMatch(/^[a-z0-9.-]+(\/[a-z0-9._-]+)+:[\w.-]+$/);
    expect(pool.memory_mb).toBeGreaterThanOrEqual(1024);
    expect(JSON.stringify(doc)).not.toContain('/home/user/notes.txt","role"');
  });

  it('the description carries the error code table', () => {
    expect(doc.info.description).toContain('| Code | Status | Meaning |');
    expect(doc.info.description).toContain('| `rate_limited` | 429 |');
  });
});
