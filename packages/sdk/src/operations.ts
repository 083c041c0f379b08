import type { Operations } from './generated/api-types.js';
import type { routeTable } from './generated/routes.js';

// Every request and answer type below comes from src/generated/api-types.ts, generated from the
// contract's OpenAPI document: the SDK never writes an API type by hand, and its published
// declarations need neither zod nor the private contract. Types only; nothing here runs.

/**
 * OperationName names one REST operation, as in the contract's route table. It is the operations
 * of the SDK's generated table that the contract still has: a route added to the contract does
 * not break the SDK's build, but src/generated/routes.test.ts fails until the table is regenerated.
 */
export type OperationName = keyof typeof routeTable & keyof Operations;

/** ParamsOf is the path parameters of an operation (`Record<string, never>` when it has none). */
export type ParamsOf<K extends OperationName> = Operations[K]['params'];

/** QueryOf is the query string of an operation; every field may be left to its default. */
export type QueryOf<K extends OperationName> = Operations[K]['query'];

/** BodyOf is the JSON body an operation takes, in its input form (defaulted fields optional). */
export type BodyOf<K extends OperationName> = Operations[K]['body'];

/** ResponseOf is an operation's successful answer: the union over its 2xx statuses. */
export type ResponseOf<K extends OperationName> = Operations[K]['response'];

/** The item type of a list operation's `data`. */
export type ItemOf<K extends OperationName> =
  ResponseOf<K> extends { data: (infer T)[]; next_cursor: string | null } ? T : never;
