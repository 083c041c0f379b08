export * from './codes.js';
export * from './envelope.js';
export * from './app-error.js';
export * from './zod-issues.js';
