import { Routes, SocketRoutes, toFastifyPath, type RunEvent } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { findRun, RunEventFeed } from '@cubicle/control-plane';
import type { FastifyRequest } from 'fastify';
import { parsePart } from '../lib/define-handler.js';
import { socketRoute } from '../lib/define-socket.js';
import { tenantOf } from '../lib/tenant-of.js';
import { Plugin } from '../plugins/plugin-names.js';
import { routeGroup } from '../plugins/route-group.js';
import { openEventStream, sseFrame } from '../streams/event-stream.js';
import { resumePoint, type ResumePoint } from '../streams/resume-point.js';
import { sendJsonFrames } from '../streams/socket-frames.js';

/**
 * Run event streams: a run's event log live, as Server-Sent Events (`streamRunEvents`) and as a
 * WebSocket (`streamRunEventsSocket`). Both replay the events after the reader's seq first (SSE
 * `Last-Event-ID`, or `?after_seq=`), then follow the run through this process's one Redis
 * subscription (RunEventFeed), and end after the run's final status. On shutdown every stream
 * ends (SSE: the response ends; WebSocket: 1001), and readers resume elsewhere with their seq.
 */
export const runEventStreams = routeGroup(
  Plugin.runEventStreams,
  (app) => {
    const { db, redis, prefix } = app.connections;
    const deps = app.resources;
    const subscriber = redis.duplicate();
    const feed = new RunEventFeed(db, subscriber, prefix);
    const closing = new AbortController();
    app.addHook('preClose', async () => closing.abort());
    app.addHook('onClose', async () => subscriber.disconnect());

    /** The run's id is the caller's and where the reader resumes (Last-Event-ID wins). */
    const start = async (
      request: FastifyRequest,
      runId: string,
      afterSeq: number | undefined,
    ): Promise<ResumePoint & { runId: string }> => {
      const lastEventId = request.headers['last-event-id'];
      let seq = afterSeq ?? 0;
      if (typeof lastEventId === 'string' && lastEventId !== '') {
        if (!/^\d{1,9}$/.test(lastEventId))
          throw new AppError('validation_failed', 'Last-Event-ID must be an event seq');
        seq = Number(lastEventId);
      }
      const run = await findRun(deps, tenantOf(request), runId);
      return { runId, ...resumePoint(run, seq) };
    };

    app.route({
      method: 'GET',
      url: toFastifyPath(Routes.streamRunEvents.path),
      config: { routeDef: Routes.streamRunEvents },
      onRequest: async (request, reply) => {
        await app.cubicleAuthenticate!(request, reply, Routes.streamRunEvents.auth);
      },
      handler: async (request, reply) => {
        const def = Routes.streamRunEvents;
        const params = parsePart(def.params, request.params, 'path') as { run_id: string };
        const query = parsePart(def.query, request.query, 'query') as { after_seq?: number };
        const { runId, afterSeq, hasEnded } = await start(request, params.run_id, query.after_seq);
        const stream = openEventStream(request, reply, closing.signal);
        try {
          const ended =
            hasEnded ||
            (await feed.follow(
              runId,
              afterSeq,
              (events) => stream.write(events.map((e) => sseFrame(e.seq, e.type, e)).join('')),
              stream.signal,
            ));
          if (ended) await stream.write('event: end\ndata: {}\n\n');
        } catch (err) {
          request.log.warn({ err, runId }, 'run event stream failed');
        } finally {
          stream.end();
        }
      },
    });

    socketRoute(app, SocketRoutes.streamRunEventsSocket, {
      open: ({ request, params, query }) => start(request, params.run_id, query.after_seq),
      serve: (socket, { runId, afterSeq, hasEnded }) => {
        const gone = new AbortController();
        socket.on('close', () => gone.abort());
        socket.on('error', () => gone.abort());
        // Clients only listen; anything they send is ignored.
        socket.on('message', () => undefined);
        if (hasEnded) return void socket.close(1000, 'run ended');
        const stop = () => socket.close(1001, 'shutting down');
        closing.signal.addEventListener('abort', stop, { once: true });
        const send = (events: RunEvent[]) => sendJsonFrames(socket, events, gone.signal);
        void feed
          .follow(runId, afterSeq, send, gone.signal)
          .then((ended) => socket.close(1000, ended ? 'run ended' : 'closed'))
          .catch(() => socket.close(1011, 'internal error'))
          .finally(() => closing.signal.removeEventListener('abort', stop));
      },
    });
  },
  [Plugin.websockets],
);
