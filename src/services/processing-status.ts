// The moves a client's processing report (v1 putProcessing) may make. docs/decisions.md §13 fixes the path
// pending → transcribing → ready | no_speech | failed and leaves the rest open; we decide:
//   - a report may repeat the current status (to add a message or late capture metadata);
//   - a finished transcription (ready, no_speech, failed) may start again (→ transcribing), because
//     the app may re-run it, e.g. after a failure;
//   - nothing goes back to pending, and one finished outcome never turns into another directly:
//     the app reports transcribing first, so a retried report cannot silently rewrite an outcome.
// Saving a nonempty transcript (an edit, not a report) still makes any editable recording ready
// (docs/decisions.md §13); that rule lives in RecordingService.update.
import { AppError } from '../errors';
import type { RecordingStatus } from './recording-model';

export const PROCESSING_MOVES: Readonly<Record<RecordingStatus, readonly RecordingStatus[]>> = {
  pending: ['pending', 'transcribing', 'ready', 'no_speech', 'failed'],
  transcribing: ['transcribing', 'ready', 'no_speech', 'failed'],
  ready: ['ready', 'transcribing'],
  no_speech: ['no_speech', 'transcribing'],
  failed: ['failed', 'transcribing'],
};

/** 409 not_editable when a processing report may not move `from` to `to`. */
export function checkProcessingMove(from: RecordingStatus, to: RecordingStatus): void {
  if (PROCESSING_MOVES[from].includes(to)) return;
  throw new AppError(
    'not_editable',
    `status: a processing report cannot move a recording from ${from} to ${to}; from ${from} it may report ${PROCESSING_MOVES[from].join(', ')}`,
  );
}

/** One line for the OpenAPI description. */
export const PROCESSING_MOVES_TEXT = Object.entries(PROCESSING_MOVES)
  .map(([from, to]) => `${from} → ${to.filter((s) => s !== from).join(' | ')}`)
  .join('; ');
