// One recording: its facts, the edit form, deletion behind a dialog, and its webhook deliveries.
import { useEffect, useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import type { Recording } from './api-types';
import { ConfirmDialog } from './confirm-dialog';
import { devicesKnowing } from './device-list';
import { displayTitle, TypeBadge } from './recording-card';
import { RecordingDeliveries } from './recording-deliveries';
import { RecordingForm } from './recording-form';
import { href, navigate } from './route';
import { LoadError, Loading } from './states';
import { dateTime, isoTime } from './time-format';
import { useLoad } from './use-load';
import { statusLabel } from './vocabulary';

export function RecordingPage({ id }: { id: string }) {
  const loaded = useLoad(() => api.recording(id), [id]);
  // A new key remounts the form: after Reload it starts from the server's version.
  const [formKey, setFormKey] = useState(0);
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deleteError, setDeleteError] = useState<string | null>(null);

  const r = loaded.value;
  const title = r ? displayTitle(r) : null;
  useEffect(() => {
    if (title !== null) document.title = `${title} · reclib`;
  }, [title]);
  if (!r) {
    return (
      <section>
        <p class="back">
          <a href={href.library}>← All recordings</a>
        </p>
        {loaded.error !== undefined ? <LoadError what="this recording" error={loaded.error} retry={loaded.reload} /> : <Loading what="the recording" />}
      </section>
    );
  }

  const reload = () => {
    api.recording(id).then(
      (fresh) => {
        loaded.set(fresh);
        setFormKey((k) => k + 1);
      },
      (e: unknown) => setDeleteError(describeError(e)),
    );
  };

  const remove = async () => {
    setDeleting(true);
    try {
      await api.deleteRecording(r.id, r.revision);
      navigate(href.library);
    } catch (e) {
      setDeleting(false);
      setConfirming(false);
      setDeleteError(describeError(e));
    }
  };

  return (
    <article class="recording-page" aria-labelledby="recording-title">
      <p class="back">
        <a href={href.library}>← All recordings</a>
      </p>
      <header class="page-head">
        <h1 id="recording-title" dir="auto">
          {displayTitle(r)}
        </h1>
        <Facts recording={r} />
      </header>
      <ErrorAlert message={deleteError} />
      <RecordingForm
        key={`${r.id}-${formKey}`}
        recording={r}
        confirming={confirming}
        onSaved={loaded.set}
        onReload={reload}
        onDelete={() => setConfirming(true)}
      />
      <RecordingDeliveries recording={r} />
      {confirming && (
        <ConfirmDialog title="Delete this recording?" confirmLabel="Delete" busy={deleting} onConfirm={remove} onCancel={() => setConfirming(false)}>
          <p>Its title, transcript and summary are erased from the library and the search index. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </article>
  );
}

function Facts({ recording: r }: { recording: Recording }) {
  return (
    <dl class="facts">
      <div>
        <dt>Type</dt>
        <dd>
          <TypeBadge type={r.type} />
        </dd>
      </div>
      <div>
        <dt>Recorded</dt>
        <dd>
          <time dateTime={isoTime(r.recordedAt)}>{dateTime(r.recordedAt)}</time>
        </dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>{statusLabel(r.status)}</dd>
      </div>
      {r.deviceId && <DeviceFact id={r.deviceId} />}
      <div>
        <dt>Revision</dt>
        <dd>{r.revision}</dd>
      </div>
    </dl>
  );
}

/** The device by its name (the id beside it); the id alone until the devices are loaded, or if it is gone. */
function DeviceFact({ id }: { id: string }) {
  const devices = useLoad(() => devicesKnowing(id), [id]);
  const name = devices.value?.find((d) => d.id === id)?.name;
  return (
    <div>
      <dt>Device</dt>
      <dd dir="auto">
        {name ? `${name} ` : ''}
        <code>{id}</code>
      </dd>
    </div>
  );
}
