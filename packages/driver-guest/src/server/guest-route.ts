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
 * route's request schema before the handler runs (400 `validation_failed` naming the fields).
 * The handler's answer is typed by the response schema and sent as it is: the guest runs inside
 * the tenant's sandbox, so the worker checks every answer against the same schema where it
 * arrives (guest-client.ts, the trust boundary) and passes on nothing outside it. A second check
 * here, before sending, only doubled that cost on the guest's single thread, inside the
 * sandbox's CPU quota (an observe's answer: 2.4-29.5 ms at load ~10). What the worker passes
 * on is what its check parsed.
 * Routes whose response is binary (`response: null`) send it themselves through `reply` and
 * return the reply.
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
      return reply.status(200).send(result);
    },
  });
}
