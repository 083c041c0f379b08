/**
 * RECORDING_DELETED is a recording row's state once retention deleted its media (never shown by
 * the API, which answers 404 as for a claim never recorded): the row stays as a marker so the
 * claim's timeline is refused as well, instead of outliving the video it was the index of.
 */
export const RECORDING_DELETED = 'deleted';

/** KEPT_RECORDING selects the recording rows that still hold a recording. */
export const KEPT_RECORDING = { state: { not: RECORDING_DELETED } } as const;
