// The handoffs repository: the one lookup of a claim's active handoff that driving paths make
// (the rest of the table is read and written through the ORM by handoffs/).
import { statement } from '@cubicle/db';

/** The claim's active handoff, if any (the partial unique index makes it one row at most). */
export const activeHandoffOf = statement<{ id: string }, [claimId: string]>(
  'cubicle_active_handoff_of_v1',
  `SELECT id FROM handoffs WHERE claim_id = $1 AND state = 'active'`,
);
