// API keys: create (secret shown once), a table of keys with last use and expiry, Revoke per row
// (behind a dialog: a revoked key cannot be used again).
import { useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import { ConfirmDialog } from './confirm-dialog';
import type { ApiKey } from './api-types';
import { KeyForm } from './key-form';
import { SecretBox } from './secret-box';
import { Empty, LoadError, Loading } from './states';
import { date, dateTime, relative } from './time-format';
import { useLoad } from './use-load';

export function KeysPage() {
  const loaded = useLoad(() => api.keys(), []);
  const [mode, setMode] = useState<{ kind: 'list' } | { kind: 'form' } | { kind: 'secret'; secret: string }>({ kind: 'list' });
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<{ key: ApiKey; busy: boolean } | null>(null);

  const revoke = async (key: ApiKey) => {
    setError(null);
    setRevoking({ key, busy: true });
    try {
      await api.revokeKey(key.id);
      loaded.reload();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setRevoking(null);
    }
  };

  const keys = loaded.value;
  return (
    <section aria-labelledby="keys-title">
      <div class="page-head with-action">
        <div>
          <h1 id="keys-title">API keys</h1>
          <p class="lede">A key lets an app or script use your library with the permissions you give it.</p>
        </div>
        {mode.kind === 'list' && (
          <button type="button" class="button primary" onClick={() => setMode({ kind: 'form' })}>
            Create key
          </button>
        )}
      </div>
      {mode.kind === 'form' && (
        <KeyForm
          onCancel={() => setMode({ kind: 'list' })}
          onCreated={(secret) => {
            setMode({ kind: 'secret', secret });
            loaded.reload();
          }}
        />
      )}
      {mode.kind === 'secret' && <SecretBox what="API key" secret={mode.secret} onDone={() => setMode({ kind: 'list' })} />}
      <ErrorAlert message={error} />
      {!keys ? (
        loaded.error !== undefined ? <LoadError what="your keys" error={loaded.error} retry={loaded.reload} /> : <Loading what="your keys" />
      ) : keys.length === 0 ? (
        <Empty title="No API keys yet.">
          <p>Create one for each app or script that reads or writes your library, with only the permissions it needs.</p>
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="table">
            <caption class="visually-hidden">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Last used</th>
                <th scope="col" class="wide-only">Expires</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id} class={k.revokedAt !== null ? 'is-revoked' : ''}>
                  <th scope="row">
                    <span class="key-name">{k.name}</span>
                    <span class="perms">
                      {k.permissions.map((p) => (
                        <code key={p}>{p}</code>
                      ))}
                    </span>
                    {/* A phone has no room for the Expires column: the date goes under the name. */}
                    <span class="narrow-only muted small key-expiry">
                      Expires <time title={dateTime(k.expiresAt)}>{date(k.expiresAt)}</time>
                    </span>
                  </th>
                  <td>{k.lastUsedAt === null ? <span class="muted">Never</span> : <time title={dateTime(k.lastUsedAt)}>{relative(k.lastUsedAt)}</time>}</td>
                  <td class="wide-only">
                    <time title={dateTime(k.expiresAt)}>{date(k.expiresAt)}</time>
                  </td>
                  <td class="row-action">
                    {k.revokedAt !== null ? (
                      <span class="status tone-off">revoked</span>
                    ) : k.expiresAt <= Date.now() ? (
                      <span class="status tone-off">expired</span>
                    ) : (
                      <button type="button" class="button small danger-outline" onClick={() => setRevoking({ key: k, busy: false })}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ConfirmDialog title={`Revoke the key “${revoking.key.name}”?`} confirmLabel="Revoke" busy={revoking.busy} onConfirm={() => revoke(revoking.key)} onCancel={() => setRevoking(null)}>
          <p>Apps and scripts that use it are refused from now on. A revoked key cannot be used again: create a new one.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
