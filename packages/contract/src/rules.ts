/**
 * CrossFieldRule is a rule the server enforces that JSON Schema cannot say, because it relates
 * two fields' values. The document publishes each under `x-cubicle-rules` on the object it binds
 * (or on the operation, as `x-cubicle-query-rules`, for a query), with a sentence in the
 * schema's description, so clients and generators can check before sending:
 * - `less_or_equal` / `less`: `left ≤ right` / `left < right`; numbers, or date-times compared
 *   as instants. A field left out counts as its default.
 * - `max_span_days`: `to − from` is at most `days` days (when every `if` field equals its value).
 * - `disjoint`: no name is both a key of the object `keys_of` and an item of the array `items_of`.
 */
export type CrossFieldRule =
  | { rule: 'less_or_equal' | 'less'; left: string; right: string }
  | { rule: 'max_span_days'; from: string; to: string; days: number; if?: Record<string, string> }
  | { rule: 'disjoint'; keys_of: string; items_of: string };

/** crossFieldRules is the `.meta()` that publishes rules (the refinement enforcing them stays beside it). */
export function crossFieldRules(description: string, ...rules: CrossFieldRule[]) {
  return { description, 'x-cubicle-rules': rules };
}

/**
 * OPAQUE is the `.meta()` of a value only the server issues (a `next_cursor`): the document cannot
 * say which strings are valid, only that a client sends back what it was given (anything else is
 * 400 `validation_failed`, issue code `invalid_cursor`).
 */
export const OPAQUE = {
  description:
    'Opaque: send back a `next_cursor` this list returned; any other value is 400 `validation_failed`.',
  'x-cubicle-opaque': true,
} as const;
