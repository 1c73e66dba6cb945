// API keys: create (secret shown once), a table of keys with last use, Revoke per row.
import { useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import type { ApiKey } from './api-types';
import { KeyForm } from './key-form';
import { SecretBox } from './secret-box';
import { Empty, LoadError, Loading } from './states';
import { dateTime, relative } from './time-format';
import { useLoad } from './use-load';

export function KeysPage() {
  const loaded = useLoad(() => api.keys(), []);
  const [mode, setMode] = useState<{ kind: 'list' } | { kind: 'form' } | { kind: 'secret'; secret: string }>({ kind: 'list' });
  const [error, setError] = useState<string | null>(null);

  const revoke = async (key: ApiKey) => {
    setError(null);
    try {
      await api.revokeKey(key.id);
      loaded.reload();
    } catch (e) {
      setError(describeError(e));
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
                  </th>
                  <td>{k.lastUsedAt === null ? <span class="muted">Never</span> : <time title={dateTime(k.lastUsedAt)}>{relative(k.lastUsedAt)}</time>}</td>
                  <td class="wide-only">{dateTime(k.expiresAt)}</td>
                  <td class="row-action">
                    {k.revokedAt !== null ? (
                      <span class="status tone-off">revoked</span>
                    ) : k.expiresAt <= Date.now() ? (
                      <span class="status tone-off">expired</span>
                    ) : (
                      <button type="button" class="button small danger-outline" onClick={() => revoke(k)}>
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
    </section>
  );
}
