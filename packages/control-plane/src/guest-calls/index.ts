export * from './guest-call-bounds.js';
export * from './guest-call-messages.js';
export * from './redact-request.js';
export * from './run-guest-call.js';
export * from './guest-calls.js';
export * from './list-actions.js';
export * from './answer-guest-call.js';
