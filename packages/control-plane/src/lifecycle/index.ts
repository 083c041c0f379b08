export * from './states.js';
export * from './claim-outcome.js';
export { decideClaim, isSplittable, type ClaimRequestItem } from './claim-batch.js';
export * from './claim-transitions.js';
export * from './sandbox-transitions.js';
export * from './claim-liveness.js';
export * from './claim-deadlines.js';
