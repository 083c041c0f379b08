export { getRecording } from './get-recording.js';
export { openRecordingMedia, type RecordingMedia } from './recording-media.js';
export { flushRecording } from './flush-recording.js';
export { finishRecording } from './finish-recording.js';
export { pullDueRecordings, pullRecording, type RecordingDeps } from './pull-recordings.js';
export { startRecordingPuller, type RecordingPullerOptions } from './recording-puller.js';
export { sweepRecordings } from './sweep-recordings.js';
export { estimateRecording } from './recording-estimate.js';
