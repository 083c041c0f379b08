export * from './address-guard.js';
export * from './deliver-webhook.js';
export * from './emit-webhook-event.js';
export * from './event-data.js';
export * from './manage-webhooks.js';
export * from './post-webhook.js';
export * from './retry-schedule.js';
export * from './webhook-signature.js';
