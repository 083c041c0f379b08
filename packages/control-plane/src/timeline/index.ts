export { getClaimTimeline, type TimelineDeps, type TimelineInput } from './claim-timeline.js';
