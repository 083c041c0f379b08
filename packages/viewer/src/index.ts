export * from './rfb/rfb-view-filter.js';
export * from './tickets/viewer-keys.js';
export * from './tickets/viewer-tickets.js';
export * from './tickets/embed-html.js';
export * from './stream/live-streams.js';
export * from './stream/stream-leases.js';
export * from './stream/revocations.js';
export * from './stream/rfb-bridge.js';
