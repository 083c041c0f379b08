import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openApiDocument, serializeOpenApi } from './index.js';
import { Routes, SocketRoutes } from '../api/routes.js';

const committedPath = fileURLToPath(new URL('../../openapi.json', import.meta.url));

describe('OpenAPI document', () => {
  it('matches the committed openapi.json (run `npm run openapi` after changing schemas)', () => {
    const committed = readFileSync(committedPath, 'utf8');
    expect(committed).toBe(serializeOpenApi());
  });

  it('is OpenAPI 3.1 with every route and resolvable references', () => {
    const doc = openApiDocument() as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).map((o) => o.operationId));
    expect(ops.sort()).toEqual(
      Object.values(Routes)
        .map((r) => r.operationId)
        .sort(),
    );
    const refs = [
      ...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g),
    ].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs)
      expect(doc.components.schemas, `dangling $ref ${ref}`).toHaveProperty(ref);
  });

  it('documents defaults on input and requires them on output', () => {
    const schemas = openApiDocument().components as {
      schemas: Record<string, { required?: string[] }>;
    };
    const spec = schemas.schemas['PoolSpec'];
    expect(spec?.required).toEqual(['image']);
    expect(schemas.schemas['Pool']?.required).toContain('claim_ttl_seconds');
  });
});

describe('WebSocket endpoints', () => {
  it('are published under x-cubicle-websockets, apart from the paths REST clients generate from', () => {
    const doc = openApiDocument() as {
      paths: Record<string, unknown>;
      'x-cubicle-websockets': Record<
        string,
        {
          get: {
            operationId: string;
            'x-cubicle-message'?: { $ref: string };
            'x-cubicle-subprotocol'?: string;
          };
        }
      >;
    };
    const published = Object.entries(doc['x-cubicle-websockets']);
    expect(published.map(([path, ops]) => [path, ops.get.operationId]).sort()).toEqual(
      Object.values(SocketRoutes)
        .map((r) => [r.path, r.operationId])
        .sort(),
    );
    for (const [path, ops] of published) {
      expect(doc.paths).not.toHaveProperty(path);
      // JSON frames name their schema; binary frames (the viewer's RFB) their subprotocol.
      if (ops.get['x-cubicle-subprotocol']) expect(ops.get['x-cubicle-message']).toBeUndefined();
      else expect(ops.get['x-cubicle-message']?.$ref).toMatch(/^#\/components\/schemas\//);
    }
  });
});

describe('OpenAPI validity', () => {
  it('passes an OpenAPI 3.1 schema validator', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const validator = new Validator();
    const result = await validator.validate(openApiDocument() as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });
});

describe('OpenAPI path parameters', () => {
  it('declare every {placeholder} of every path, and nothing else', () => {
    const doc = openApiDocument() as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>>;
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      const expected = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(ops)) {
        const declared = op.parameters
          .filter((p) => p.in === 'path')
          .map((p) => p.name)
          .sort();
        expect(declared, `${method.toUpperCase()} ${path}`).toEqual(expected);
      }
    }
  });
});
