import { ErrorCodes, type ErrorCodeName } from '../errors/codes.js';
import { isStorableText, STORABLE_TEXT_PATTERN } from '../text.js';

// What the document says in words and patterns beyond the schemas' shapes: the request string
// rule as a pattern, how to read the x-cubicle extensions, and the closed table of error codes.

type JsonSchema = Record<string, unknown>;
type ZodInternals = { _zod: { def: { checks?: { _zod: { def: { fn?: unknown } } }[] } } };

/**
 * publishTextRule gives every string that obeys the request string rule (text()) its pattern,
 * beside any pattern of its own: the rule is a refinement on the server, a pattern in the document.
 */
export function publishTextRule(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }) {
  const checks = (ctx.zodSchema as ZodInternals)._zod.def.checks ?? [];
  if (!checks.some((c) => c._zod.def.fn === isStorableText)) return;
  const s = ctx.jsonSchema;
  // The hook can meet one schema twice (as a component and where it is used): add the rule once.
  if (JSON.stringify(s).includes(JSON.stringify(STORABLE_TEXT_PATTERN))) return;
  if (s.pattern === undefined && s.allOf === undefined) s.pattern = STORABLE_TEXT_PATTERN;
  else
    s.allOf = [
      ...((s.allOf as JsonSchema[] | undefined) ?? []),
      { pattern: STORABLE_TEXT_PATTERN },
    ];
}

/** RULES_SECTION tells readers and generators how to read what the server enforces beyond types. */
export const RULES_SECTION = [
  '## What the server enforces',
  '',
  'Every request string is free of NUL (`\\u0000`) and of unpaired UTF-16 surrogates: such strings carry the pattern `' +
    STORABLE_TEXT_PATTERN +
    '`. A value that breaks any schema is 400 `validation_failed` naming the field.',
  '',
  'Rules between fields that JSON Schema cannot say are published under `x-cubicle-rules` on the object they bind (`x-cubicle-query-rules` on an operation, for its query), each described in words too:',
  '`less_or_equal` / `less` (`left ≤ right` / `left < right`; numbers, or date-times as instants; a missing field counts as its default),',
  '`max_span_days` (`to − from` at most `days` days, when every field of `if` has that value) and',
  '`disjoint` (no name is both a key of `keys_of` and an item of `items_of`).',
  'A parameter marked `x-cubicle-opaque` takes only values the server issued (a `next_cursor`).',
  '',
  '',
].join('\n');

/** errorCodeTable is the closed list of error codes as a Markdown table (the reference renders it). */
export function errorCodeTable(): string {
  const rows = (Object.keys(ErrorCodes) as ErrorCodeName[]).map(
    (c) =>
      `| \`${c}\` | ${ErrorCodes[c].status} | ${ErrorCodes[c].description.replaceAll('|', '\\|')} |`,
  );
  return ['## Error codes', '', '| Code | Status | Meaning |', '| --- | --- | --- |', ...rows].join(
    '\n',
  );
}
