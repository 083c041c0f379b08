import { AppError } from '@cubicle/contract/errors';
import {
  ARCHIVE_BINARY_TYPE,
  ARCHIVE_CHUNKS_HEADER,
  ARCHIVE_STAGE_MAX_BLOBS,
  ARCHIVE_TRANSFER_MAX_BYTES,
  GUEST_MAX_BODY_BYTES,
  GuestRoutes,
  formatChunkSpans,
  parseChunkSpans,
} from '@cubicle/contract/guest';
import { zodIssues } from '@cubicle/http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { GuestDeps } from '../server/deps.js';
import { guestRoute } from '../server/guest-route.js';
import { withFsErrors } from '../files/map-fs-error.js';
import { applyManifest, needChunks } from './apply-manifest.js';
import { homeOf } from './home-root.js';
import { readChunkBytes, readChunks } from './read-chunks.js';
import { scanHome } from './scan-home.js';
import { hostStageOf, stageChunkBytes, stageChunks } from './staging.js';

/**
 * registerArchiveRoutes mounts archive.scan, read, need, stage and apply (the guest archive,
 * contract guest/archive.ts): every path is under the desktop user's home (HOME of the driver's
 * children), never followed through a symlink. read and stage also speak the binary form
 * (ARCHIVE_BINARY_TYPE): raw chunk bytes, their ids and lengths in ARCHIVE_CHUNKS_HEADER.
 * need and apply also find chunks in the host's stage of a local sandbox (HOST_STAGE_DIR).
 */
export function registerArchiveRoutes(app: FastifyInstance, deps: GuestDeps) {
  const home = () => homeOf(deps.childEnv);
  guestRoute(app, GuestRoutes['archive.scan'], (body) =>
    withFsErrors('the home', () => scanHome(home(), body)),
  );
  guestRoute(app, GuestRoutes['archive.need'], (body) =>
    withFsErrors('the home', async () => needChunks(home(), body, await hostStageOf())),
  );
  guestRoute(app, GuestRoutes['archive.apply'], (body) =>
    withFsErrors('the home', async () => applyManifest(home(), body, await hostStageOf())),
  );
  // Scoped: only these two routes take a raw body.
  void app.register(async (scope) => {
    scope.addContentTypeParser(
      ARCHIVE_BINARY_TYPE,
      { parseAs: 'buffer', bodyLimit: GUEST_MAX_BODY_BYTES },
      (_req, body, done) => done(null, body),
    );
    const read = GuestRoutes['archive.read'];
    scope.route({
      method: read.method,
      url: read.path,
      handler: async (request, reply) => {
        const body = parsed(read.request, request);
        if (!wantsBinary(request)) {
          const answer = await withFsErrors('the home', () => readChunks(home(), body));
          return reply.status(200).send(read.response.parse(answer));
        }
        const chunks = await withFsErrors('the home', () => readChunkBytes(home(), body));
        return reply
          .status(200)
          .header(
            ARCHIVE_CHUNKS_HEADER,
            formatChunkSpans(chunks.map((c) => ({ hash: c.hash, length: c.bytes.length }))),
          )
          .type(ARCHIVE_BINARY_TYPE)
          .send(Buffer.concat(chunks.map((c) => c.bytes)));
      },
    });
    const stage = GuestRoutes['archive.stage'];
    scope.route({
      method: stage.method,
      url: stage.path,
      handler: async (request, reply) => {
        if (!Buffer.isBuffer(request.body)) {
          const body = parsed(stage.request, request);
          const answer = await withFsErrors('the staging area', () => stageChunks(home(), body));
          return reply.status(200).send(stage.response.parse(answer));
        }
        const raw = request.body;
        if (raw.length > ARCHIVE_TRANSFER_MAX_BYTES)
          throw new AppError(
            'payload_too_large',
            `${raw.length} bytes staged at once; the bound is ${ARCHIVE_TRANSFER_MAX_BYTES}`,
            { limit: ARCHIVE_TRANSFER_MAX_BYTES },
          );
        const header = request.headers[ARCHIVE_CHUNKS_HEADER];
        const spans = parseChunkSpans(
          typeof header === 'string' ? header : undefined,
          raw.length,
          ARCHIVE_STAGE_MAX_BLOBS,
        );
        if (!spans || spans.length === 0)
          throw new AppError(
            'validation_failed',
            `${ARCHIVE_CHUNKS_HEADER} must list 1 to ${ARCHIVE_STAGE_MAX_BLOBS} chunks as hash:length whose lengths add up to the body`,
            {
              issues: [
                { path: `header.${ARCHIVE_CHUNKS_HEADER}`, message: 'malformed chunk list' },
              ],
            },
          );
        let at = 0;
        const blobs = spans.map((s) => {
          const bytes = raw.subarray(at, at + s.length);
          at += s.length;
          return { hash: s.hash, bytes };
        });
        const answer = await withFsErrors('the staging area', () => stageChunkBytes(home(), blobs));
        return reply.status(200).send(stage.response.parse(answer));
      },
    });
  });
}

const wantsBinary = (request: FastifyRequest) =>
  (request.headers.accept ?? '').includes(ARCHIVE_BINARY_TYPE);

/** parsed checks a JSON body as guestRoute does (400 `validation_failed` naming the fields). */
function parsed<S extends z.ZodType>(schema: S, request: FastifyRequest): z.infer<S> {
  const result = schema.safeParse(request.body ?? {});
  if (!result.success)
    throw new AppError('validation_failed', 'invalid body', {
      issues: zodIssues(result.error, 'body'),
    });
  return result.data;
}
