export * from './redact.js';
export * from './secrets-for-run.js';
