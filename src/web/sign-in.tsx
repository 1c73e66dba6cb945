// The sign-in form (docs/decisions.md §8): Account (name or id) and Password; a failure is an alert and the
// form stays.
import { useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, ApiError, describeError } from './api';

function failureText(e: unknown): string {
  if (e instanceof ApiError && e.status === 401) return 'Wrong account or password. Check both and try again.';
  if (e instanceof ApiError && e.status === 429) return `Too many attempts. Wait ${e.retryAfter ?? 60} seconds, then try again.`;
  return describeError(e);
}

export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | undefined }) {
  const [account, setAccount] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (account.trim() === '' || password === '') {
      setError('Enter your account name and your password.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.signIn(account.trim(), password);
      onSignedIn();
    } catch (err) {
      setError(failureText(err));
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title">
        <p class="brand brand-large" aria-hidden="true">
          <span class="brand-mark" />
          reclib
        </p>
        <h1 id="sign-in-title">Sign in to your library</h1>
        {notice && !error && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <ErrorAlert message={error} />
        <label class="field">
          <span>Account</span>
          <input name="account" autoComplete="username" value={account} onInput={(e) => setAccount(e.currentTarget.value)} autoFocus />
        </label>
        <label class="field">
          <span>Password</span>
          <input name="password" type="password" autoComplete="current-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <button type="submit" class="button primary wide" disabled={busy}>
          Sign in
        </button>
        <p class="hint">
          No account yet? Create one on the server: <code>reclib accounts create --name NAME --password-stdin</code>
        </p>
      </form>
    </main>
  );
}
