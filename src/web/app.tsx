// The app shell: asks the server whether a session exists, shows the sign-in form or the pages with
// their navigation, and returns to sign-in whenever the API answers 401.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, ApiError, setSignedOutHandler } from './api';
import type { SessionInfo } from './api-types';
import { DevicesPage } from './devices-page';
import { KeysPage } from './keys-page';
import { focusSearchSoon, LibraryPage } from './library-page';
import { RecordingPage } from './recording-page';
import { href, mayLeave, navigate, parseRoute, useRoute, type Route } from './route';
import { SignIn } from './sign-in';
import { LoadError, Loading } from './states';
import { WebhooksPage } from './webhooks-page';

type State = { kind: 'checking' } | { kind: 'failed'; error: unknown } | { kind: 'out'; notice?: string } | { kind: 'in'; session: SessionInfo };

const NAV: Array<{ to: string; label: string; pages: Route['page'][] }> = [
  { to: href.library, label: 'Library', pages: ['library', 'recording'] },
  { to: href.devices, label: 'Devices', pages: ['devices'] },
  { to: href.keys, label: 'API keys', pages: ['keys'] },
  { to: href.webhooks, label: 'Webhooks', pages: ['webhooks'] },
];

const TITLES: Record<Route['page'], string> = {
  library: 'Library', recording: 'Recording', devices: 'Devices', keys: 'API keys', webhooks: 'Webhooks', missing: 'Not found',
};

export function App() {
  const [state, setState] = useState<State>({ kind: 'checking' });
  /** Why the last Sign out did not end the session (the server refused it): shown until the next try. */
  const [signOutError, setSignOutError] = useState<string | null>(null);
  const route = useRoute();

  const check = () => {
    setState({ kind: 'checking' });
    api.session().then(
      (session) => setState({ kind: 'in', session }),
      (error: unknown) => setState((error as { status?: number }).status === 401 ? { kind: 'out' } : { kind: 'failed', error }),
    );
  };
  useEffect(() => {
    setSignedOutHandler(() => setState({ kind: 'out', notice: 'Your session has ended. Sign in again.' }));
    check();
  }, []);

  // "/" focuses the search from anywhere (typing "/" into a field still types it).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || t?.closest('input, textarea, select, [contenteditable], dialog')) return;
      e.preventDefault();
      focusSearchSoon();
      if (parseRoute(location.hash).page !== 'library') navigate(href.library);
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  // A new page starts at the top; focus lost with the clicked link goes to the page, so the next
  // Tab continues there and a screen reader announces the new content.
  const routeKey = route.page === 'recording' ? `recording:${route.id}` : route.page;
  const firstRoute = useRef(true);
  useEffect(() => {
    if (firstRoute.current) {
      firstRoute.current = false;
      return;
    }
    scrollTo(0, 0);
    setSignOutError(null);
    if (!document.activeElement || document.activeElement === document.body) document.getElementById('main')?.focus();
  }, [routeKey]);

  useEffect(() => {
    document.title = state.kind === 'in' ? `${TITLES[route.page]} · reclib` : 'Sign in · reclib';
  }, [route.page, state.kind]);

  if (state.kind === 'checking') return <main class="centered"><Loading what="reclib" /></main>;
  if (state.kind === 'failed') return <main class="centered"><LoadError what="your session" error={state.error} retry={check} /></main>;
  if (state.kind === 'out') return <SignIn onSignedIn={check} notice={state.notice} />;

  // On the library already, a link to it would add a history entry (#/) that the library then
  // replaces with its filters' address (#/?q=…): two alike, and Back seems to do nothing. It stays.
  const stayOnLibrary = (e: MouseEvent) => {
    if (route.page === 'library' && e.button === 0 && !(e.ctrlKey || e.metaKey || e.shiftKey || e.altKey)) e.preventDefault();
  };

  const signOut = async () => {
    // Signing out takes the page down, unsaved edits with it: asked first, like a link.
    if (!mayLeave()) return;
    setSignOutError(null);
    try {
      await api.signOut();
    } catch (e) {
      // 401: the session was over already. Anything else (the server unreachable, a proxy's 403,
      // a 503): the session is still live on the server and its cookie in this browser, so saying
      // "signed out" would leave a shared computer signed in at the next reload.
      if (!(e instanceof ApiError && e.status === 401)) {
        setSignOutError(`Not signed out: ${(e instanceof Error ? e.message : String(e)).replace(/\.?$/, '.')} Try again.`);
        return;
      }
    }
    navigate(href.library);
    setState({ kind: 'out', notice: 'You are signed out.' });
  };

  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <a class="brand" href={href.library} onClick={stayOnLibrary}>
            <span class="brand-mark" aria-hidden="true" />
            reclib
          </a>
          <nav class="nav" aria-label="Main">
            {NAV.map((n) => (
              <a key={n.to} href={n.to} class="nav-link" aria-current={n.pages.includes(route.page) ? 'page' : undefined} onClick={n.to === href.library ? stayOnLibrary : undefined}>
                {n.label}
              </a>
            ))}
          </nav>
          <div class="account">
            <span class="account-name" title={state.session.account.id}>
              {state.session.account.name}
            </span>
            <button type="button" class="button subtle" onClick={signOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" class="page" tabIndex={-1}>
        <ErrorAlert message={signOutError} />
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'library':
      return <LibraryPage route={route} />;
    case 'recording':
      return <RecordingPage key={route.id} id={route.id} />;
    case 'devices':
      return <DevicesPage />;
    case 'keys':
      return <KeysPage />;
    case 'webhooks':
      return <WebhooksPage />;
    default:
      return (
        <section class="state state-empty">
          <h1>Page not found</h1>
          <p>
            <a href={href.library}>Go to your library</a>
          </p>
        </section>
      );
  }
}
