import type { Recording as RecordingView } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Deps } from '../resources.js';
import { KEPT_RECORDING } from './recording-kept.js';
import { toRecordingView } from './recording-view.js';

/**
 * getRecording answers a claim's recording, tenant-scoped: another tenant's claim, a claim that
 * was not recorded and a recording retention deleted are all 404 alike.
 */
export async function getRecording(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  claimId: string,
): Promise<RecordingView> {
  const row = await deps.db.recording.findFirst({
    where: { claimId, tenantId, ...KEPT_RECORDING },
    include: { segments: { orderBy: { seq: 'asc' } } },
  });
  if (!row) throw new AppError('not_found', 'this claim has no recording');
  return toRecordingView(row, row.segments);
}
