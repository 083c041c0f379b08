export * from './rollup-usage.js';
export * from './query-usage.js';
export * from './pool-insights.js';
export * from './usage-cli.js';
export * from './viewer-connections.js';
export * from './claim-screenshots.js';
export * from './keep-action-screenshots.js';
