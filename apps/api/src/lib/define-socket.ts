import { toFastifyPath, type SocketRouteDef } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { WebSocket } from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { AuthContext } from '../auth/authenticate.js';
import { parsePart } from './define-handler.js';

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

/** What a socket route knows before the upgrade: the validated request and its caller. */
export interface SocketInput<R extends SocketRouteDef> {
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  auth: R['auth'] extends 'none' ? undefined : AuthContext;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface SocketHandlers<R extends SocketRouteDef, Opened> {
  /** Before the upgrade: resolve what the socket serves; an AppError refuses with the envelope. */
  open(input: SocketInput<R>): Promise<Opened>;
  /**
   * After the upgrade. Attach the socket's listeners before any `await`: frames that arrive
   * meanwhile are otherwise lost.
   */
  serve(socket: WebSocket, opened: Opened, request: FastifyRequest): void;
}

/**
 * socketRoute mounts one contract SocketRouteDef. Before the upgrade, like `route()`, it
 * authenticates the caller at the route's `auth`, validates path and query with the contract's
 * schemas and runs `open`; any refusal is the error envelope on a plain HTTP answer, and no
 * socket is ever accepted. A GET without the upgrade is a 400.
 */
export function socketRoute<R extends SocketRouteDef, Opened>(
  app: FastifyInstance,
  def: R,
  handlers: SocketHandlers<R, Opened>,
) {
  const level = def.auth;
  const authenticate = app.cubicleAuthenticate;
  if (level !== 'none' && !authenticate)
    throw new Error(`${def.operationId} needs auth: call registerAuth before registering it`);
  const openedOf = new WeakMap<FastifyRequest, Opened>();
  app.route({
    method: 'GET',
    url: toFastifyPath(def.path),
    ...(level !== 'none' && authenticate
      ? {
          onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
            await authenticate(request, reply, level);
          },
        }
      : {}),
    preValidation: async (request, reply) => {
      const input = {
        auth: request.auth ?? undefined,
        params: parsePart(def.params, request.params, 'path'),
        query: parsePart(def.query, request.query, 'query'),
        request,
        reply,
      } as SocketInput<R>;
      openedOf.set(request, await handlers.open(input));
    },
    handler: async () => {
      throw new AppError('validation_failed', 'this endpoint only speaks WebSocket');
    },
    wsHandler: (socket, request) => handlers.serve(socket, openedOf.get(request)!, request),
  });
}
