export { errorBody, registerErrorHandler, sendError, zodIssues } from './error-handler.js';
export { registerJsonBody } from './json-body.js';
