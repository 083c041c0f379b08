import { AppError } from '@cubicle/contract/errors';
import {
  bodyLimitOf,
  isBinaryBody,
  toFastifyPath,
  type BinaryBody,
  type RouteDef,
} from '@cubicle/contract/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { zodIssues } from '@cubicle/http';
import { noteResponseId } from '../audit/audit-plugin.js';
import type { AuthContext, Authenticate } from '../auth/authenticate.js';

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

export interface HandlerInput<R extends RouteDef> {
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  body: Infer<R['body']>;
  headers: Infer<R['headers']>;
  /** The verified caller; present on every route whose contract `auth` is not `none`. */
  auth: R['auth'] extends 'none' ? undefined : AuthContext;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** A handler returns a status from the route's responses and its body. */
export type HandlerResult<R extends RouteDef> = {
  [S in keyof R['responses'] & number]: {
    status: S;
    body: R['responses'][S] extends z.ZodType
      ? z.input<R['responses'][S]>
      : R['responses'][S] extends BinaryBody
        ? Buffer
        : null;
  };
}[keyof R['responses'] & number];

/** parsePart validates one part of a request with its contract schema (400 naming the fields). */
export function parsePart<T extends z.ZodType>(
  schema: T | undefined,
  value: unknown,
  where: string,
): unknown {
  if (!schema) return undefined;
  // Nothing sent reads as `{}` (the document marks such bodies optional); JSON `null` is a value,
  // never an object, so it fails like any other wrong type.
  const result = schema.safeParse(value === undefined ? {} : value);
  if (!result.success) {
    // A malformed path id is its own code: the caller passed something that cannot be an id.
    const code = where === 'path' ? 'invalid_id' : 'validation_failed';
    throw new AppError(code, `invalid ${where}`, { issues: zodIssues(result.error, where) });
  }
  return result.data;
}

/**
 * CheckedJsonBody is an answer already checked against `schema` where it was made (a drive
 * route's guest answer: the worker checks it against the guest route's response schema, which is
 * the REST route's own object) and carried as JSON text. route() sends it as it is when `schema`
 * is the route's response schema, and checks it like any answer otherwise: a big observe or
 * screenshot is neither parsed, checked nor written again in the API.
 */
export class CheckedJsonBody {
  constructor(
    readonly json: string,
    readonly schema: z.ZodType,
  ) {}
}

export interface RouteOptions {
  /**
   * Who may call instead of the app's API key authenticator: a route that also takes a scoped
   * token (a replay link on a claim's recording) passes one that falls back to it.
   */
  authenticate?: Authenticate;
}

/**
 * route mounts one contract RouteDef: it authenticates the caller when the route's `auth` asks
 * for it (before the body is even parsed), validates path, query, headers and body with the
 * contract's schemas before the handler runs, and the handler's result is checked against the
 * response schema, so a route cannot answer outside the published document.
 */
export function route<
  R extends RouteDef,
  // The handler is its own type parameter so TypeScript keeps `status: 200` literal in plain
  // object answers (checked against R once R is fixed by `def`); no `as const` needed.
  H extends (input: HandlerInput<R>) => Promise<HandlerResult<R>> | HandlerResult<R>,
>(app: FastifyInstance, def: R, handler: H, options: RouteOptions = {}) {
  const level = def.auth;
  const authenticate = options.authenticate ?? app.cubicleAuthenticate;
  if (level !== 'none' && !authenticate)
    throw new Error(`${def.operationId} needs auth: call registerAuth before registering it`);
  app.route({
    method: def.method,
    url: toFastifyPath(def.path),
    // The limit the document publishes for this operation, and no other.
    bodyLimit: bodyLimitOf(def),
    config: { routeDef: def },
    ...(level !== 'none' && authenticate
      ? {
          onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
            await authenticate(request, reply, level);
          },
        }
      : {}),
    handler: async (request, reply) => {
      const input = {
        auth: request.auth ?? undefined,
        params: parsePart(def.params, request.params, 'path'),
        query: parsePart(def.query, request.query, 'query'),
        headers: parsePart(def.headers, request.headers, 'header'),
        body: parsePart(def.body, request.body, 'body'),
        request,
        reply,
      } as HandlerInput<R>;
      const result = await handler(input);
      const schema = def.responses[result.status as keyof typeof def.responses];
      if (schema === undefined)
        throw new Error(`${def.operationId} answered undeclared status ${result.status}`);
      noteResponseId(request, result.body);
      const status: number = result.status;
      if (schema === null) return reply.status(status).send();
      if (isBinaryBody(schema)) {
        if (!Buffer.isBuffer(result.body))
          throw new Error(`${def.operationId} must answer bytes for ${schema.mediaType}`);
        return reply.status(status).type(schema.mediaType).send(result.body);
      }
      if (result.body instanceof CheckedJsonBody) {
        if (result.body.schema === schema)
          return reply
            .status(status)
            .type('application/json; charset=utf-8')
            .send(result.body.json);
        (result as { body: unknown }).body = JSON.parse(result.body.json);
      }
      const checked = schema.safeParse(result.body);
      // An answer outside the published schema is our bug: a 500 (logged), never shown to the caller.
      if (!checked.success)
        throw new Error(
          `${def.operationId} response violates its schema: ${checked.error.message}`,
        );
      return reply.status(status).send(checked.data as unknown);
    },
  });
}
