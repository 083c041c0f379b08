import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { namedSchemas } from '../registry.js';
import * as guest from './index.js';

const idOf = (schema: unknown) => namedSchemas.find((entry) => entry.schema === schema)?.id;

const schemas = Object.entries(guest as Record<string, unknown>).filter(
  (entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType,
);

describe('guest contract exports', () => {
  it('exports the protocol version', () => {
    expect(guest.GUEST_PROTOCOL_VERSION).toBe('v1');
  });

  it.each(schemas)('%s converts to JSON Schema for input and output', (_name, schema) => {
    expect(() => z.toJSONSchema(schema, { io: 'input' })).not.toThrow();
    expect(() => z.toJSONSchema(schema, { io: 'output' })).not.toThrow();
  });

  it('registers every named schema as Guest<ExportName>', () => {
    const named = schemas.filter(([, schema]) => idOf(schema) !== undefined);
    expect(named.length).toBeGreaterThan(50);
    for (const [name, schema] of named) {
      // GuestErrorResponse is the shared ErrorEnvelope under a guest-side name.
      if (name === 'GuestErrorResponse') continue;
      expect(idOf(schema)).toBe(`Guest${name}`);
    }
  });

  it('keeps discriminated invariants visible in the JSON Schema', () => {
    const json = JSON.stringify(z.toJSONSchema(guest.ActionResult, { io: 'output' }));
    expect(json).toContain('"oneOf"');
    expect(json).toContain('"minItems":1');
    expect(json).toContain('"additionalProperties":false');
  });
});
