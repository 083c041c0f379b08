export * from './connection.js';
export * from './enqueue.js';
export * from './dispatch.js';
export * from './dependency-errors.js';
export * from './lanes/sandbox-lanes.js';
