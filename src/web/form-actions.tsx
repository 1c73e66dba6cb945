// The button rows under the app's forms: Create and Cancel for a new key or webhook; Save with the
// state of the last save for an edit.
import { ApiError, describeError } from './api';

/** Where an edit form is: a save on its way or done, a conflict (412), or a failure to show (`gone`: a 410, nothing left to save to). */
export type SaveState = { kind: 'idle' | 'saving' | 'saved' | 'conflict' } | { kind: 'error'; message: string; gone?: true };

/** A failed save: 412 is someone else's newer version (offer Reload), 410 a deletion elsewhere, anything else a message. */
export const failedSave = (err: unknown): SaveState =>
  err instanceof ApiError && err.status === 412
    ? { kind: 'conflict' }
    : err instanceof ApiError && err.status === 410
      ? { kind: 'error', message: 'This was deleted elsewhere (in another tab, or by an app) after you opened it: there is nothing left to save your changes to.', gone: true }
      : { kind: 'error', message: describeError(err) };

/** Create (disabled while the create is on its way) and Cancel. */
export function CreateActions({ busy, onCancel }: { busy: boolean; onCancel: () => void }) {
  return (
    <div class="actions">
      <button type="submit" class="button primary" disabled={busy}>
        Create
      </button>
      <button type="button" class="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** Save, and beside it a status line a screen reader announces: Saving…, Saved or Unsaved changes. */
export function SaveActions({ state, unsaved }: { state: SaveState; unsaved: boolean }) {
  return (
    <div class="actions">
      <button type="submit" class="button primary" disabled={state.kind === 'saving'}>
        Save
      </button>
      <span class="save-state" role="status">
        {state.kind === 'saving'
          ? 'Saving…'
          : state.kind === 'saved'
            ? 'Saved'
            : state.kind === 'conflict' || state.kind === 'error'
              ? 'Not saved: see the message above'
              : unsaved
                ? 'Unsaved changes'
                : ''}
      </span>
    </div>
  );
}
