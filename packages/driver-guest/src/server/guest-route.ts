import type { GuestHttpRoute } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { zodIssues } from '@cubicle/http';

type RequestOf<R> = R extends { request: infer Q }
  ? Q extends z.ZodType
    ? z.infer<Q>
    : undefined
  : undefined;
type ResponseOf<R> = R extends { response: infer S }
  ? S extends z.ZodType
    ? z.input<S>
    : unknown
  : unknown;

export interface RouteContext {
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * guestRoute mounts one entry of the contract's `GuestRoutes` table: the body is parsed with the
 * route's request schema before the handler runs (400 `validation_failed` naming the fields),
 * and the handler's answer is checked against the response schema, so the driver cannot answer
 * outside the protocol. Routes whose response is binary (`response: null`) send it themselves
 * through `reply` and return the reply.
 */
export function guestRoute<R extends GuestHttpRoute>(
  app: FastifyInstance,
  def: R,
  handler: (body: RequestOf<R>, ctx: RouteContext) => Promise<ResponseOf<R>> | ResponseOf<R>,
) {
  app.route({
    method: def.method,
    url: def.path,
    handler: async (request, reply) => {
      let body: unknown = undefined;
      if (def.request) {
        const parsed = def.request.safeParse(request.body ?? {});
        if (!parsed.success) {
          throw new AppError('validation_failed', 'invalid body', {
            issues: zodIssues(parsed.error, 'body'),
          });
        }
        body = parsed.data;
      }
      const result = await handler(body as RequestOf<R>, { request, reply });
      if (!def.response) return result;
      const checked = def.response.safeParse(result);
      // An answer outside the protocol is our bug: a logged 500, never shown to the caller.
      if (!checked.success) {
        throw new Error(`${def.path} response violates its schema: ${checked.error.message}`);
      }
      return reply.status(200).send(checked.data);
    },
  });
}
