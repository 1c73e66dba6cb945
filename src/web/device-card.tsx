// One device's input settings. The revision read with them goes back as If-Match; a 412 means
// someone else saved first, and the form offers to reload.
import { useState } from 'preact/hooks';
import { ConflictAlert, ErrorAlert } from './alerts';
import { api } from './api';
import type { Device, Inputs } from './api-types';
import { failedSave, SaveActions, type SaveState } from './form-actions';
import { LoadError, Loading } from './states';
import { useLoad } from './use-load';
import { inputLabel, INPUT_NAMES } from './vocabulary';

const MODEL_NAMES: Record<Device['model'], string> = { ring: 'Ring', pin: 'Pin', pendant: 'Pendant' };

export function DeviceCard({ device }: { device: Device }) {
  const loaded = useLoad(() => api.deviceSettings(device.id), [device.id]);
  const [draft, setDraft] = useState<Inputs | null>(null);
  const [state, setState] = useState<SaveState>({ kind: 'idle' });
  const titleId = `device-${device.id}`;
  const settings = loaded.value;
  const inputs = draft ?? settings?.inputs ?? {};

  const save = async (e: Event) => {
    e.preventDefault();
    if (!settings) return;
    setState({ kind: 'saving' });
    try {
      const saved = await api.saveDeviceSettings(device.id, settings.revision, inputs);
      loaded.set(saved);
      setDraft(null);
      setState({ kind: 'saved' });
    } catch (err) {
      setState(failedSave(err));
    }
  };
  const reload = () => {
    setDraft(null);
    setState({ kind: 'idle' });
    loaded.reload();
  };

  return (
    <section class="card device" aria-labelledby={titleId}>
      <h2 id={titleId}>{device.name}</h2>
      <p class="muted small">
        {MODEL_NAMES[device.model]} · <code>{device.id}</code>
      </p>
      {!settings ? (
        loaded.error !== undefined ? <LoadError what="the settings" error={loaded.error} retry={loaded.reload} /> : <Loading what="settings" />
      ) : (
        <form onSubmit={save}>
          {state.kind === 'conflict' && (
            <ConflictAlert onReload={reload}>
              <p>These settings were changed elsewhere since you opened them; yours were not saved.</p>
            </ConflictAlert>
          )}
          {state.kind === 'error' && <ErrorAlert message={state.message} />}
          <div class="inputs">
            {INPUT_NAMES.filter((name) => settings.inputs[name] !== undefined).map((name) => (
              <label key={name} class="field inline">
                <span>
                  {/* The API's name beside the label, for people wiring it; not read out twice ("Hold hold"). */}
                  {inputLabel(name)} <code class="muted" aria-hidden="true">{name}</code>
                </span>
                <select
                  value={inputs[name]}
                  onChange={(e) => {
                    setDraft({ ...inputs, [name]: e.currentTarget.value as 'clip' | 'memo' });
                    setState({ kind: 'idle' });
                  }}
                >
                  <option value="clip">Clip</option>
                  <option value="memo">Memo</option>
                </select>
              </label>
            ))}
          </div>
          <SaveActions state={state} unsaved={draft !== null} />
        </form>
      )}
    </section>
  );
}
