export * from './parse-env.js';
export * from './vars.js';
export * from './redis-url.js';
