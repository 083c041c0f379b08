import type { Routes } from '@cubicle/contract/api';
import type { z } from 'zod';
import type { routeTable } from './generated/routes.js';

// Every request and answer type below is inferred from the contract's route table: the SDK
// never writes an API type by hand. These are types only; nothing here exists at run time.
type R = typeof Routes;

/**
 * OperationName names one REST operation, as in the contract's route table. It is the operations
 * of the SDK's generated table that the contract still has: a route added to the contract does
 * not break the SDK's build, but test/drift.test.ts fails until the table is regenerated.
 */
export type OperationName = keyof typeof routeTable & keyof R;

type Field<K extends OperationName, F extends string> = R[K] extends { [P in F]: infer S }
  ? S extends z.ZodType
    ? S
    : never
  : never;

/** ParamsOf is the path parameters of an operation (`{}` when it has none). */
export type ParamsOf<K extends OperationName> = [Field<K, 'params'>] extends [never]
  ? Record<string, never>
  : z.output<Field<K, 'params'>>;

/** QueryOf is the query string of an operation; every field may be left to its default. */
export type QueryOf<K extends OperationName> = [Field<K, 'query'>] extends [never]
  ? Record<string, never>
  : Partial<z.output<Field<K, 'query'>>>;

/** BodyOf is the JSON body an operation takes, in its input form (defaulted fields optional). */
export type BodyOf<K extends OperationName> = [Field<K, 'body'>] extends [never]
  ? undefined
  : z.input<Field<K, 'body'>>;

type Answer<S> = S extends z.ZodType ? z.output<S> : S extends null ? undefined : never;

/** ResponseOf is an operation's successful answer: the union over its 2xx statuses. */
export type ResponseOf<K extends OperationName> = {
  [S in keyof R[K]['responses']]: Answer<R[K]['responses'][S]>;
}[keyof R[K]['responses']];

/** The item type of a list operation's `data`. */
export type ItemOf<K extends OperationName> =
  ResponseOf<K> extends { data: (infer T)[]; next_cursor: string | null } ? T : never;
