// Property-based fuzz of the whole published API (issue 11 §3): for every operation of
// packages/contract/openapi.json, fast-check builds requests from the document's schemas (valid,
// near-valid with one field replaced, hostile strings, wrong types, raw bytes in URLs, other
// tenants' and bad keys) and sends them to the real app on real Postgres and Redis. The bar:
// no answer is a 5xx, and every error is the envelope. A failing run prints its seed and the
// shrunk request; each such request is kept as a named case in hostile-input.test.ts.
//
// Bounds: FUZZ_RUNS requests per operation (default 25, about 1,500 in all), FUZZ_SEED to replay.
// Calls that would reach a desktop use claims that are not active (no worker runs here), and
// createClaim is sent with wait_seconds 0, so no request waits for a worker.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';
import { committedDocument } from './fuzz/committed-document.js';
import {
  hostileString,
  hostileValue,
  schemaArbitrary,
  withOneFieldReplaced,
  type JsonSchema,
} from './fuzz/schema-arbitrary.js';

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}
interface Operation {
  operationId: string;
  tags: string[];
  parameters: Parameter[];
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
}

const { doc, operations } = committedDocument<Operation>();
const components = doc.components.schemas;
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

/** A raw URL fragment sent as is: malformed escapes and encoded NUL or surrogates. */
type Raw = { raw: string };
const rawToken = fc
  .constantFrom('%00', '%ED%A0%80', '%FF', '%', '%%', 'a%2', '%C0%80', '..', '%2F')
  .map((raw): Raw => ({ raw }));

/** encodeUrlPart percent-encodes a value's UTF-8 bytes (a lone surrogate becomes U+FFFD). */
function encodeUrlPart(value: unknown): string {
  if (value && typeof value === 'object' && 'raw' in value) return (value as Raw).raw;
  const bytes = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');
  let out = '';
  for (const b of bytes)
    out += /[A-Za-z0-9._~-]/.test(String.fromCharCode(b))
      ? String.fromCharCode(b)
      : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

describe('API fuzz from the published document: no 5xx', () => {
  let fx: FullAppFixture;
  const known: Record<string, string[]> = {};
  let quiet: { released: string; pending: string };

  beforeAll(async () => {
    fx = await fullAppFixture();
    const active = await fx.claim('fuzz-pool');
    const released = await fx.claim('fuzz-pool');
    await fx.app.inject({
      method: 'DELETE',
      url: `/v1/claims/${released.id}`,
      headers: { authorization: fx.a.admin },
    });
    await fx.pool('fuzz-empty');
    const pending = await fx.app.inject({
      method: 'POST',
      url: '/v1/pools/fuzz-empty/claims',
      headers: { authorization: fx.a.admin },
      payload: { wait_seconds: 0 },
    });
    expect(pending.statusCode).toBe(202);
    quiet = { released: released.id, pending: pending.json().id as string };
    known.id = [active.id, quiet.released, quiet.pending];
    known.name = ['fuzz-pool', 'fuzz-empty', 'nothing-here'];
  });
  afterAll(async () => fx?.close());

  it('reads the document', () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s',
    async (_name, { path, method, op }) => {
      // Desktop and run calls on an active claim would wait for a worker: not here.
      // Pause and resume go down the sandbox's lane too (a worker freezes the desktop).
      const reachesWorker =
        op.tags.some((t) => t === 'drive' || t === 'runs') ||
        ['pauseClaim', 'resumeClaim'].includes(op.operationId);
      // A live stream of a claim that is not over stays open: only the released one ends.
      const streams = path.endsWith('/stream');
      const idsFor = (name: string) =>
        name === 'id' && streams
          ? [quiet.released]
          : name === 'id' && reachesWorker
            ? [quiet.released, quiet.pending]
            : (known[name] ?? []);
      const paramArb = (p: Parameter) =>
        fc.oneof(
          ...(idsFor(p.name).length > 0
            ? [{ weight: 4, arbitrary: fc.constantFrom(...idsFor(p.name)) }]
            : []),
          { weight: 2, arbitrary: schemaArbitrary(p.schema, components) },
          { weight: 1, arbitrary: hostileString },
          { weight: 1, arbitrary: rawToken },
        );
      const pathParams = op.parameters.filter((p) => p.in === 'path');
      const queryParams = op.parameters.filter((p) => p.in === 'query');
      const headerParams = op.parameters.filter((p) => p.in === 'header');
      const bodySchema = op.requestBody?.content['application/json'].schema;
      const validBody = bodySchema
        ? schemaArbitrary(bodySchema, components)
        : fc.constant(undefined);
      const body = fc.oneof(
        { weight: 4, arbitrary: validBody },
        {
          weight: 3,
          arbitrary: fc
            .tuple(validBody, hostileValue, fc.nat())
            .map(([v, bad, pick]) => withOneFieldReplaced(v, bad, pick)),
        },
        { weight: 1, arbitrary: hostileValue },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('{"a":', '[1,2', '\u0000', '"\\ud800"')
            .map((raw): Raw => ({ raw })),
        },
      );
      const request = fc.record({
        auth: fc.constantFrom<string | undefined>(
          fx.a.admin,
          fx.a.admin,
          fx.a.admin,
          fx.a.member,
          fx.b.admin,
          'Bearer cub_nope',
          undefined,
        ),
        params: fc.tuple(...pathParams.map(paramArb)),
        query: fc.tuple(...queryParams.map((p) => fc.option(paramArb(p), { nil: undefined }))),
        headers: fc.tuple(
          ...headerParams.map((p) =>
            fc.option(fc.oneof(schemaArbitrary(p.schema, components), hostileString), {
              nil: undefined,
            }),
          ),
        ),
        body,
      });

      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          let i = 0;
          const url =
            path.replace(/\{[a-z_]+\}/g, () => encodeUrlPart(r.params[i++])) +
            (queryParams.length > 0
              ? '?' +
                queryParams
                  .map((p, j) =>
                    r.query[j] === undefined ? '' : `${p.name}=${encodeUrlPart(r.query[j])}`,
                  )
                  .filter(Boolean)
                  .join('&')
              : '');
          const headers: Record<string, string> = {};
          if (r.auth) headers.authorization = r.auth;
          headerParams.forEach((p, j) => {
            const v = r.headers[j];
            // A header value is bytes on the wire; inject refuses what HTTP cannot carry.
            if (typeof v === 'string' && /^[\t\x20-\x7e]*$/.test(v))
              headers[p.name.toLowerCase()] = v;
          });
          let payload: string | undefined;
          if (method !== 'GET' && r.body !== undefined) {
            let value = r.body;
            if (
              op.operationId === 'createClaim' &&
              value &&
              typeof value === 'object' &&
              !Array.isArray(value)
            )
              value = { ...value, wait_seconds: 0 };
            payload =
              typeof value === 'object' && value && 'raw' in value
                ? (value as Raw).raw
                : JSON.stringify(value);
            headers['content-type'] = 'application/json';
          }
          const res = await fx.app.inject({
            method: method as 'GET',
            url,
            headers,
            ...(payload === undefined ? {} : { payload }),
          });
          const where = `${method} ${url} ${payload?.slice(0, 300) ?? ''} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, where).toBeLessThan(500);
          if (res.statusCode >= 400)
            expect(typeof res.json<{ error?: { code?: unknown } }>().error?.code, where).toBe(
              'string',
            );
        }),
        { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: false },
      );
    },
  );
});
