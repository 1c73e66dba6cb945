// Editing a recording: Title, Transcript, Summary, Pinned, saved with If-Match. A save over a newer
// revision (412) shows an alert with Reload and overwrites nothing. A save after the recording was
// deleted elsewhere (410) leaves the text on the page, read-only, to copy: there is nothing left to
// save it to, so Save and Delete go.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ConflictAlert, ErrorAlert } from './alerts';
import { api } from './api';
import type { Recording } from './api-types';
import { failedSave, SaveActions, type SaveState } from './form-actions';
import { useLeaveGuard } from './route';

type Draft = Pick<Recording, 'title' | 'transcript' | 'summary' | 'pinned'>;

const draftOf = (r: Recording): Draft => ({ title: r.title, transcript: r.transcript, summary: r.summary, pinned: r.pinned });

/**
 * Edits not saved when the form was left without a question (Back or Forward, which route.ts does
 * not ask about), by recording id, for the revision they started from: coming back to that
 * revision brings them back. Kept for the page's lifetime, not stored.
 */
const drafts = new Map<string, { revision: number; draft: Draft }>();

export function RecordingForm({ recording, confirming, onSaved, onReload, onDelete }: {
  recording: Recording;
  /** The delete dialog is open: its Delete is then the only button of that name. */
  confirming: boolean;
  onSaved: (r: Recording) => void;
  onReload: () => void;
  onDelete: () => void;
}) {
  const [draft, setDraft] = useState<Draft>(() => {
    const kept = drafts.get(recording.id);
    drafts.delete(recording.id);
    return kept && kept.revision === recording.revision ? kept.draft : draftOf(recording);
  });
  const [state, setState] = useState<SaveState>({ kind: 'idle' });
  /** The recording was deleted elsewhere (a save answered 410): the state stays so, as nothing can be saved or changed. */
  const gone = state.kind === 'error' && state.gone === true;
  const set = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    if (state.kind === 'saved') setState({ kind: 'idle' });
  };
  const changed = (Object.keys(draft) as Array<keyof Draft>).filter((k) => draft[k] !== recording[k]);
  // Left with changes (Back or Forward): kept for the way back; not when the person said to lose them.
  const latest = useRef({ draft, changed: changed.length > 0, revision: recording.revision });
  latest.current = { draft, changed: changed.length > 0, revision: recording.revision };
  useLeaveGuard(changed.length > 0, 'This recording has changes that are not saved. Leave and lose them?', () => {
    latest.current.changed = false;
  });
  useEffect(
    () => () => {
      if (latest.current.changed) drafts.set(recording.id, { revision: latest.current.revision, draft: latest.current.draft });
    },
    [recording.id],
  );

  const save = async (e: Event) => {
    e.preventDefault();
    // Enter in a field of a recording that no longer exists: there is no Save to press.
    if (gone) return;
    if (changed.length === 0) {
      setState({ kind: 'saved' });
      return;
    }
    setState({ kind: 'saving' });
    const patch = Object.fromEntries(changed.map((k) => [k, draft[k]])) as Partial<Draft>;
    try {
      const saved = await api.updateRecording(recording.id, recording.revision, patch);
      onSaved(saved);
      setDraft(draftOf(saved));
      setState({ kind: 'saved' });
    } catch (err) {
      setState(failedSave(err));
    }
  };

  return (
    <form class="card recording-form" onSubmit={save}>
      {state.kind === 'conflict' && (
        <ConflictAlert onReload={onReload} extraClass="conflict">
          <p>
            This recording was changed elsewhere after you opened it. Your edits were not saved, and nothing was overwritten. Reload to see the
            latest version (your edits here will be replaced).
          </p>
        </ConflictAlert>
      )}
      {state.kind === 'error' && <ErrorAlert message={gone ? `${state.message} Your text is still below, to copy.` : state.message} />}
      <label class="field">
        <span>Title</span>
        <input dir="auto" value={draft.title} readOnly={gone} onInput={(e) => set({ title: e.currentTarget.value })} placeholder="Add a title" />
      </label>
      <label class="field">
        <span>Transcript</span>
        <textarea dir="auto" class="transcript" rows={10} value={draft.transcript} readOnly={gone} onInput={(e) => set({ transcript: e.currentTarget.value })} />
      </label>
      <label class="field">
        <span>Summary</span>
        <textarea dir="auto" rows={3} value={draft.summary} readOnly={gone} onInput={(e) => set({ summary: e.currentTarget.value })} />
      </label>
      <label class="check">
        <input type="checkbox" checked={draft.pinned} disabled={gone} onChange={(e) => set({ pinned: e.currentTarget.checked })} />
        <span>Pinned</span>
      </label>
      {gone ? (
        <p class="actions save-state" role="status">
          Not saved: this recording no longer exists.
        </p>
      ) : (
        <div class="actions split">
          <SaveActions state={state} unsaved={changed.length > 0} />
          <button type="button" class="button danger-outline" onClick={onDelete} aria-hidden={confirming ? 'true' : undefined}>
            Delete
          </button>
        </div>
      )}
    </form>
  );
}
