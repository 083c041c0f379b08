import websocket from '@fastify/websocket';
import { Routes, RunId, RunStreamQuery, toFastifyPath, type RunEvent } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import {
  cancelRun,
  createRun,
  findRun,
  getRun,
  listClaimRuns,
  listRunEvents,
  RunEventFeed,
  writeRunStdin,
  type RunDeps,
} from '@cubicle/control-plane';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { route } from '../lib/define-handler.js';
import { tenantOf } from '../lib/tenant-of.js';

/** SSE comment lines keep idle streams open through proxies. */
const SSE_KEEPALIVE_MS = 15_000;

/**
 * registerRunRoutes mounts runs: create (202, queued; the worker starts it), get, list, stdin,
 * cancel, the event log as JSON pages, and the same log live as Server-Sent Events and as a
 * WebSocket. Both live forms replay the events after the reader's seq first (SSE
 * `Last-Event-ID`, or `?after_seq=`) and end after the run's final status.
 */
export async function registerRunRoutes(
  app: FastifyInstance,
  deps: RunDeps,
  redis: Redis,
): Promise<void> {
  const subscriber = redis.duplicate();
  const feed = new RunEventFeed(deps.db, subscriber, deps.prefix);
  // Open live streams end on shutdown; their readers resume elsewhere with their last seq.
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  app.addHook('onClose', async () => subscriber.disconnect());

  route(app, Routes.createRun, async ({ request, params, body, headers, auth }) => ({
    status: 202,
    body: await createRun(
      deps,
      tenantOf(request),
      params.id,
      body,
      headers['idempotency-key'],
      auth.role,
    ),
  }));
  route(app, Routes.listClaimRuns, async ({ request, params, query }) => ({
    status: 200,
    body: await listClaimRuns(deps, tenantOf(request), params.id, query),
  }));
  route(app, Routes.getRun, async ({ request, params }) => ({
    status: 200,
    body: await getRun(deps, tenantOf(request), params.run_id),
  }));
  route(app, Routes.listRunEvents, async ({ request, params, query }) => ({
    status: 200,
    body: await listRunEvents(deps, tenantOf(request), params.run_id, query),
  }));
  route(app, Routes.writeRunStdin, async ({ request, params, body }) => ({
    status: 202,
    body: await writeRunStdin(deps, tenantOf(request), params.run_id, body),
  }));
  route(app, Routes.cancelRun, async ({ request, params, body }) => ({
    status: 202,
    body: await cancelRun(deps, tenantOf(request), params.run_id, body.grace_seconds),
  }));

  /** Checks the key, the run id, that the run is the caller's, and where to resume. */
  const prepare = async (request: FastifyRequest, reply: FastifyReply) => {
    await app.cubicleAuthenticate!(request, reply, 'api_key');
    const id = RunId.safeParse((request.params as { run_id?: string }).run_id);
    if (!id.success) throw new AppError('invalid_id', 'not a run id');
    const query = RunStreamQuery.safeParse(request.query ?? {});
    if (!query.success) throw new AppError('validation_failed', 'invalid query');
    const lastEventId = request.headers['last-event-id'];
    let afterSeq = query.data.after_seq ?? 0;
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      if (!/^\d{1,9}$/.test(lastEventId))
        throw new AppError('validation_failed', 'Last-Event-ID must be an event seq');
      afterSeq = Number(lastEventId);
    }
    await findRun(deps, tenantOf(request), id.data);
    return { runId: id.data, afterSeq };
  };

  app.route({
    method: 'GET',
    url: toFastifyPath(Routes.streamRunEvents.path),
    config: { routeDef: Routes.streamRunEvents },
    handler: async (request, reply) => {
      const { runId, afterSeq } = await prepare(request, reply);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      res.flushHeaders();
      const gone = new AbortController();
      const stop = () => gone.abort();
      res.on('close', stop);
      closing.signal.addEventListener('abort', stop, { once: true });
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), SSE_KEEPALIVE_MS);
      const write = async (text: string) => {
        if (!res.write(text) && !gone.signal.aborted)
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done);
              gone.signal.removeEventListener('abort', done);
              resolve();
            };
            res.on('drain', done);
            gone.signal.addEventListener('abort', done);
          });
      };
      try {
        const ended = await feed.follow(
          runId,
          afterSeq,
          (events) => write(events.map(sseFrame).join('')),
          gone.signal,
        );
        if (ended) await write('event: end\ndata: {}\n\n');
      } catch (err) {
        request.log.warn({ err, runId }, 'run event stream failed');
      } finally {
        clearInterval(keepalive);
        closing.signal.removeEventListener('abort', stop);
        res.end();
      }
    },
  });

  if (!app.hasDecorator('websocketServer')) await app.register(websocket);
  const runOf = new WeakMap<FastifyRequest, { runId: string; afterSeq: number }>();
  app.route({
    method: 'GET',
    url: toFastifyPath(`${Routes.streamRunEvents.path.replace(/\/stream$/, '')}/ws`),
    preValidation: async (request, reply) => {
      runOf.set(request, await prepare(request, reply));
    },
    handler: async () => {
      throw new AppError('validation_failed', 'this endpoint only speaks WebSocket');
    },
    wsHandler: (socket, request) => {
      const { runId, afterSeq } = runOf.get(request)!;
      const gone = new AbortController();
      socket.on('close', () => gone.abort());
      socket.on('error', () => gone.abort());
      // Clients only listen; anything they send is ignored.
      socket.on('message', () => undefined);
      const stop = () => socket.close(1001, 'shutting down');
      closing.signal.addEventListener('abort', stop, { once: true });
      const send = async (events: RunEvent[]) => {
        for (const event of events) socket.send(JSON.stringify(event));
        while (socket.bufferedAmount > 1024 * 1024 && !gone.signal.aborted)
          await new Promise((r) => setTimeout(r, 10));
      };
      void feed
        .follow(runId, afterSeq, send, gone.signal)
        .then((ended) => socket.close(1000, ended ? 'run ended' : 'closed'))
        .catch(() => socket.close(1011, 'internal error'))
        .finally(() => closing.signal.removeEventListener('abort', stop));
    },
  });
}

/** sseFrame writes one event: `id` is its seq, so a reconnecting EventSource resumes after it. */
function sseFrame(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
