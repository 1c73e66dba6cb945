// Creating an API key: Name, one checkbox per permission (labelled with its name), Expiry (days).
import { useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import { CreateActions } from './form-actions';
import { PERMISSIONS } from './vocabulary';

export function KeyForm({ onCreated, onCancel }: { onCreated: (secret: string) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<string[]>([]);
  const [expiry, setExpiry] = useState('90');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const toggle = (p: string, on: boolean) => setPermissions(on ? [...permissions, p] : permissions.filter((x) => x !== p));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Not a number: sent as null, so the server's message says what expiry must be.
      const created = await api.createKey({ name: name.trim(), permissions: PERMISSIONS.filter((p) => permissions.includes(p)), expiry: Number(expiry) });
      onCreated(created.secret);
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };

  return (
    <form class="card form" onSubmit={submit} aria-labelledby="key-form-title">
      <h2 id="key-form-title">New API key</h2>
      <ErrorAlert message={error} />
      <label class="field">
        <span>Name</span>
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. Phone app" autoFocus />
      </label>
      <fieldset class="field">
        <legend>Permissions</legend>
        <div class="checks">
          {PERMISSIONS.map((p) => (
            <label key={p} class="check">
              <input type="checkbox" checked={permissions.includes(p)} onChange={(e) => toggle(p, e.currentTarget.checked)} />
              <code>{p}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <label class="field narrow">
        <span>Expiry (days)</span>
        <input type="number" inputMode="numeric" min={1} max={365} value={expiry} onInput={(e) => setExpiry(e.currentTarget.value)} />
      </label>
      <CreateActions busy={busy} onCancel={onCancel} />
    </form>
  );
}
