export { createServer, requestIdOf, type ServerOptions } from './create-server.js';
export { DEFAULT_DRAIN_BOUNDS, drainRequestBody, type DrainBounds } from './drain-request.js';
export { errorBody, registerErrorHandler, sendError, zodIssues } from './error-handler.js';
export { registerJsonBody } from './json-body.js';
