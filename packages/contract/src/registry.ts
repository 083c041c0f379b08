import type { z } from 'zod';

/**
 * namedSchemas lists every schema that appears under `components.schemas` in the OpenAPI
 * document, by id. It is a plain list (rather than zod's global registry) so ids stay unique
 * even when two copies of the module are loaded, e.g. from `src` by a test runner and from
 * `dist` by an app, and so the generator can iterate it in a stable order.
 */
export const namedSchemas: { id: string; schema: z.ZodType; description?: string }[] = [];

/** named records a schema under a component id and returns it unchanged. */
export function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  if (namedSchemas.some((entry) => entry.id === id)) {
    throw new Error(`contract: component id ${id} is defined twice`);
  }
  namedSchemas.push(description === undefined ? { id, schema } : { id, schema, description });
  return schema;
}
