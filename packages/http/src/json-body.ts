import { AppError } from '@cubicle/contract/errors';
import type { FastifyInstance } from 'fastify';

/**
 * registerJsonBody parses JSON bodies, except that an empty body is no body: clients often send
 * `content-type: application/json` on a DELETE or POST without a payload. Malformed JSON is the
 * envelope's `invalid_json`.
 */
export function registerJsonBody(app: FastifyInstance) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new AppError('invalid_json', 'the request body is not valid JSON'), undefined);
    }
  });
}
