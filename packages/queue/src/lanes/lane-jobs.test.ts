import { JobNames } from '@cubicle/contract/jobs';
import { describe, expect, it } from 'vitest';
import { isLaneJob, type LaneJobName } from '../enqueue.js';

describe('lane jobs', () => {
  it('are exactly the catalog jobs whose queue is per sandbox', () => {
    const written: LaneJobName[] = ['guest.call', 'secrets.sync', 'claim.pause'];
    expect(JobNames.filter(isLaneJob).sort()).toEqual(written.sort());
  });
});
