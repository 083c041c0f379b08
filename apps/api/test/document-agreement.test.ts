// The document says what the server enforces (issue 37): for every operation of the committed
// packages/contract/openapi.json, fast-check builds requests from the document's own schemas —
// valid ones, and near-valid ones with one field replaced — a JSON Schema 2020-12 validator
// judges each against the document, and the real app (real Postgres and Redis) answers it.
// A disagreement is a document-valid request the server refuses as malformed (400
// validation_failed / invalid_id, or 413), or a document-invalid one it lets past validation
// (any answer but 400/413/415/route_not_found: a 404 for an unknown id or a 409 for an ended
// claim means the body was accepted). The bar is 0.
//
// Bounds: AGREEMENT_RUNS requests per operation (default 60), AGREEMENT_SEED to replay. Calls that
// would reach a desktop use claims that are not active (no worker runs here).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullAppFixture, type FullAppFixture } from './full-app-fixture.js';
import { committedDocument } from './fuzz/committed-document.js';
import {
  documentJudge,
  type DocOperation,
  type DocParameter,
  type DocRequest,
} from './fuzz/document-validator.js';
import { hostileValue, schemaArbitrary, withOneFieldReplaced } from './fuzz/schema-arbitrary.js';

const { doc, operations } = committedDocument<DocOperation>();
const RUNS = Number(process.env.AGREEMENT_RUNS ?? 60);
const SEED = process.env.AGREEMENT_SEED === undefined ? 37 : Number(process.env.AGREEMENT_SEED);
const judge = documentJudge(doc.components.schemas);

/** onWire is a parameter value as a client puts it in a URL or header (numbers as decimals). */
const onWire = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** isWellFormed: no lone surrogate, which has no UTF-8 form to percent-encode (ES2024's String#isWellFormed). */
const isWellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

/** Codes that mean "the request is malformed": the server's validation refused it. */
const MALFORMED = new Set(['validation_failed', 'invalid_id', 'payload_too_large']);

interface Disagreement {
  operation: string;
  kind: 'refused-valid' | 'accepted-invalid';
  request: string;
  answer: string;
}

describe('the document and the server agree on what is valid', () => {
  let fx: FullAppFixture;
  const known: Record<string, string[]> = {};
  const disagreements: Disagreement[] = [];
  const sent = { valid: 0, invalid: 0 };

  beforeAll(async () => {
    fx = await fullAppFixture();
    const released = await fx.claim('agree-pool');
    await fx.app.inject({
      method: 'DELETE',
      url: `/v1/claims/${released.id}`,
      headers: { authorization: fx.a.admin },
    });
    known.id = [released.id];
    known.name = ['agree-pool', 'nothing-here'];
  });
  afterAll(async () => {
    // One line per disagreement, so a failing run says what to fix in the contract.
    if (disagreements.length > 0)
      console.log(
        disagreements.map((d) => `${d.kind} ${d.operation}: ${d.request} → ${d.answer}`).join('\n'),
      );
    await fx?.close();
  });

  it.each(operations.map((o) => [`${o.method} ${o.path}`, o] as const))(
    '%s',
    async (_name, { path, method, op }) => {
      const why = judge(op);
      const value = (p: DocParameter) =>
        known[p.name] && p.in === 'path'
          ? fc.oneof(
              fc.constantFrom(...known[p.name]!),
              schemaArbitrary(p.schema, doc.components.schemas),
            )
          : schemaArbitrary(p.schema, doc.components.schemas);
      const part = (where: DocParameter['in']) => {
        // An opaque parameter takes only what the server issued: a made-up one is no request
        // the document describes, so it is left out.
        const params = op.parameters.filter((p) => p.in === where && !p.schema['x-cubicle-opaque']);
        return fc.record(Object.fromEntries(params.map((p) => [p.name, value(p)])), {
          requiredKeys: params.filter((p) => p.required).map((p) => p.name),
        });
      };
      const bodySchema = op.requestBody?.content['application/json'].schema;
      const validBody = bodySchema
        ? schemaArbitrary(bodySchema, doc.components.schemas)
        : fc.constant(undefined);
      const body = fc.oneof(
        { weight: 3, arbitrary: validBody },
        {
          weight: 1,
          arbitrary: fc
            .tuple(validBody, hostileValue, fc.nat())
            .map(([v, bad, pick]) => (v === undefined ? v : withOneFieldReplaced(v, bad, pick))),
        },
        // JSON null where an object is expected (it once read as `{}`).
        ...(bodySchema ? [{ weight: 1, arbitrary: fc.constant(null) }] : []),
      );
      const request = fc.record({
        path: part('path'),
        query: part('query'),
        headers: part('header'),
        body,
      }) as fc.Arbitrary<DocRequest>;

      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          // A value HTTP cannot carry in a header is not a request anyone can send.
          for (const v of Object.values(r.headers)) if (!/^[\t\x20-\x7e]*$/.test(onWire(v))) return;
          // An empty path segment names another route, and a lone surrogate has no UTF-8 form:
          // neither is a request a client can send for this operation.
          const sendable = (v: unknown) => onWire(v) !== '' && isWellFormed(onWire(v));
          if (!Object.values(r.path).every(sendable)) return;
          if (!Object.values(r.query).every((v) => isWellFormed(onWire(v)))) return;
          const invalid = why(r);
          const url =
            path.replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
              encodeURIComponent(onWire(r.path[name])),
            ) +
            (Object.keys(r.query).length > 0
              ? '?' +
                Object.entries(r.query)
                  .map(([k, v]) => `${k}=${encodeURIComponent(onWire(v))}`)
                  .join('&')
              : '');
          const headers: Record<string, string> = { authorization: fx.a.admin };
          for (const [k, v] of Object.entries(r.headers)) headers[k.toLowerCase()] = onWire(v);
          let payload: string | undefined;
          if (r.body !== undefined) {
            payload = JSON.stringify(r.body);
            headers['content-type'] = 'application/json';
          }
          const res = await fx.app.inject({
            method: method as 'GET',
            url,
            headers,
            ...(payload === undefined ? {} : { payload }),
          });
          const error =
            res.statusCode >= 400
              ? res.json<{ error: { code: string; details?: { issues?: unknown } } }>().error
              : undefined;
          const code = error?.code ?? '';
          const malformed = MALFORMED.has(code) || code === 'unsupported_media_type';
          // A 400 without field issues refuses what the request names, not its shape (e.g. a
          // stored secret that does not exist): the document cannot know the tenant's state.
          const aboutState = code === 'validation_failed' && error?.details?.issues === undefined;
          const answer = `${res.statusCode} ${res.body.slice(0, 240)}`;
          const shown = `${method} ${url} ${payload?.slice(0, 240) ?? ''}`;
          if (invalid === undefined) {
            sent.valid++;
            if (malformed && !aboutState)
              disagreements.push({
                operation: op.operationId,
                kind: 'refused-valid',
                request: shown,
                answer,
              });
          } else {
            sent.invalid++;
            if (!malformed && code !== 'route_not_found')
              disagreements.push({
                operation: op.operationId,
                kind: 'accepted-invalid',
                request: `${shown} [${invalid}]`,
                answer,
              });
          }
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: false },
      );
    },
  );

  it('refuses JSON null as a body everywhere, and takes no body where the document makes it optional', async () => {
    const problems: string[] = [];
    for (const { path, method, op } of operations) {
      if (!op.requestBody) continue;
      // The document's own examples name well-formed ids that exist nowhere.
      const url = path.replace(/\{([a-z_]+)\}/g, (_m, name: string) =>
        String(op.parameters.find((q) => q.in === 'path' && q.name === name)!.example),
      );
      const headers = { authorization: fx.a.admin, 'content-type': 'application/json' };
      const asNull = await fx.app.inject({
        method: method as 'POST',
        url,
        headers,
        payload: 'null',
      });
      if (asNull.statusCode !== 400 || asNull.json().error.code !== 'validation_failed')
        problems.push(`${op.operationId} null → ${asNull.statusCode}`);
      const none = await fx.app.inject({
        method: method as 'POST',
        url,
        headers: { authorization: fx.a.admin },
      });
      const refused = none.statusCode === 400 && none.json().error.code === 'validation_failed';
      if (refused !== Boolean(op.requestBody.required))
        problems.push(
          `${op.operationId} no body → ${none.statusCode} (required: ${op.requestBody.required})`,
        );
    }
    expect(problems).toEqual([]);
  });

  it('answers a method no operation declares on a documented path with 405 and Allow', async () => {
    const problems: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      const url = path.replace(/\{[a-z_]+\}/g, (m) =>
        m === '{name}' ? 'agree-pool' : 'x_01jd8x3m4k6z9q2w5e7r1t3y5v',
      );
      const declared = Object.keys(ops).map((m) => m.toUpperCase());
      const expected = [...declared, ...(declared.includes('GET') ? ['HEAD'] : [])].sort();
      for (const method of ['TRACE', 'PATCH', 'PUT', 'DELETE'].filter(
        (m) => !declared.includes(m),
      )) {
        const res = await fx.app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: fx.a.admin },
        });
        const allow = String(res.headers.allow ?? '')
          .split(', ')
          .sort();
        if (res.statusCode !== 405 || allow.join() !== expected.join())
          problems.push(
            `${method} ${path} → ${res.statusCode} Allow: ${allow.join()} (want ${expected.join()})`,
          );
        else expect(res.json().error.code).toBe('method_not_allowed');
      }
    }
    expect(problems).toEqual([]);
  });

  it('counts 0 disagreements over enough document-valid and -invalid requests', () => {
    const byOperation = new Map<string, number>();
    for (const d of disagreements)
      byOperation.set(
        `${d.kind} ${d.operation}`,
        (byOperation.get(`${d.kind} ${d.operation}`) ?? 0) + 1,
      );
    console.log(
      `agreement: ${sent.valid} valid and ${sent.invalid} invalid requests, ${disagreements.length} disagreements`,
    );
    expect(sent.valid).toBeGreaterThan(operations.length * 10);
    expect(sent.invalid).toBeGreaterThan(operations.length * 5);
    expect(Object.fromEntries(byOperation)).toEqual({});
  });
});
