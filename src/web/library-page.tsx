// The library: newest first, grouped by day, searched as one types (debounced; a late answer to
// an older query is dropped), filtered by type, device and status, paged with Load more.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ErrorAlert } from './alerts';
import { api, describeError } from './api';
import type { Device, Recording } from './api-types';
import { loadDevices } from './device-list';
import { LibraryFilters, NO_FILTERS, type Filters } from './library-filters';
import { RecordingCard } from './recording-card';
import { href, parseRoute, type Route } from './route';
import { libraryFilters, libraryHash } from './route-parse';
import { parseQuery } from './search-match';
import { Empty, LoadError, Loading } from './states';
import { dayKey, dayLabel } from './time-format';

const DEBOUNCE_MS = 200;

/** Set by the "/" shortcut: the search box takes focus once the library is on screen. */
let wantSearchFocus = false;
export function focusSearchSoon(): void {
  wantSearchFocus = true;
  const box = document.getElementById('search');
  if (box) {
    wantSearchFocus = false;
    box.focus();
  }
}

/** Filters survive a visit to a recording and back (kept for the page's lifetime, not stored). */
let remembered: Filters = NO_FILTERS;

/**
 * How far the person had come when they left the library (to open a recording): how many
 * recordings were loaded (Load more) and where the page was scrolled. Coming back loads that many
 * again, fresh (edits made meanwhile show), and scrolls back there.
 */
let left: { filters: Filters; count: number; scrollY: number } | null = null;
const PAGE = 30;
const sameFilters = (a: Filters, b: Filters) => a.q === b.q && a.type === b.type && a.deviceId === b.deviceId && a.status === b.status;

interface Page {
  recordings: Recording[];
  nextCursor: string | null;
}

function groupByDay(recordings: Recording[]): Array<{ key: number; label: string; items: Recording[] }> {
  const groups: Array<{ key: number; label: string; items: Recording[] }> = [];
  for (const r of recordings) {
    const key = dayKey(r.recordedAt);
    const last = groups[groups.length - 1];
    if (last && last.key === key) last.items.push(r);
    else groups.push({ key, label: dayLabel(r.recordedAt), items: [r] });
  }
  return groups;
}

/** `f` as the library's address, in place of the current one (no history entry). */
function showInAddress(f: Filters): void {
  const hash = libraryHash(f);
  if ((location.hash || '#/') !== hash) history.replaceState(history.state, '', hash);
}

const toQuery = (f: Filters) => ({ q: f.q.trim(), type: f.type, deviceId: f.deviceId, status: f.status });

export function LibraryPage({ route }: { route: Extract<Route, { page: 'library' }> }) {
  // The address's filters (a reload, a link someone shared), else the ones last used in this tab.
  const [start] = useState(() => libraryFilters(route.query) ?? remembered);
  const [filters, setFilters] = useState<Filters>(start);
  const [applied, setApplied] = useState<Filters>(start);
  const [page, setPage] = useState<Page | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [moreError, setMoreError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  /** A new search or filter is on its way: the results shown are the previous ones. */
  const [busy, setBusy] = useState(false);
  const [devices, setDevices] = useState<Device[]>([]);
  const generation = useRef(0);
  /** Where to go back to (see `left`), until the first page has been shown. */
  const returning = useRef(left && sameFilters(left.filters, start) ? left : null);
  /** How many recordings are on screen (read when the page is left). */
  const shown = useRef(0);

  useEffect(() => {
    if (wantSearchFocus) focusSearchSoon();
    loadDevices().then(setDevices, () => setDevices([]));
    // Read at each click (a card's link, the nav), before anything moves: by the time this page is
    // taken down, even by the time a hashchange listener here runs, the router has rendered the next
    // page and the browser has clamped the scroll to its height.
    let scrollY = window.scrollY;
    const onClick = () => (scrollY = window.scrollY);
    document.addEventListener('click', onClick, true);
    return () => {
      document.removeEventListener('click', onClick, true);
      left = { filters: remembered, count: shown.current, scrollY };
    };
  }, []);

  // The address follows what is applied (replaced, not a history entry per search), so that a
  // reload, a bookmark or a shared link shows the same search, and Back from a recording too.
  useEffect(() => {
    if (parseRoute(location.hash).page === 'library') showInAddress(applied);
  }, [applied]);

  // An address typed or followed while the library is open: its filters, or (#/, the nav's link)
  // the ones in use, which the address then shows again.
  const firstRoute = useRef(route);
  useEffect(() => {
    if (route === firstRoute.current) return;
    const wanted = libraryFilters(route.query);
    if (wanted && !sameFilters(wanted, filters)) {
      setFilters(wanted);
      setApplied(wanted);
    } else {
      showInAddress(applied);
    }
  }, [route]);

  // Typing waits for a pause; the selects apply at once.
  useEffect(() => {
    remembered = filters;
    const typed = filters.q !== applied.q;
    const t = setTimeout(() => setApplied(filters), typed ? DEBOUNCE_MS : 0);
    return () => clearTimeout(t);
  }, [filters]);

  const load = () => {
    const mine = ++generation.current;
    setError(undefined);
    setBusy(true);
    const done = () => mine === generation.current && setBusy(false);
    const back = returning.current;
    api.recordings(toQuery(applied), back ? Math.max(back.count, PAGE) : PAGE).then(
      (p) => {
        if (mine === generation.current) {
          setPage(p);
          if (back) requestAnimationFrame(() => window.scrollTo(0, back.scrollY));
        }
        returning.current = null;
        done();
      },
      (e: unknown) => {
        if (mine === generation.current) setError(e);
        done();
      },
    );
  };
  useEffect(load, [applied]);

  const loadMore = async () => {
    if (!page?.nextCursor) return;
    const mine = generation.current;
    setLoadingMore(true);
    setMoreError(null);
    try {
      const next = await api.recordings({ ...toQuery(applied), cursor: page.nextCursor });
      if (mine === generation.current) setPage({ recordings: [...page.recordings, ...next.recordings], nextCursor: next.nextCursor });
    } catch (e) {
      setMoreError(describeError(e));
    } finally {
      setLoadingMore(false);
    }
  };

  const terms = useMemo(() => parseQuery(applied.q), [applied.q]);
  const filtered = applied.q.trim() !== '' || applied.type !== '' || applied.deviceId !== '' || applied.status !== '';
  const groups = useMemo(() => groupByDay(page?.recordings ?? []), [page]);
  const count = page?.recordings.length ?? 0;
  shown.current = count;

  return (
    <section class="library" aria-labelledby="library-title">
      <div class="page-head">
        <h1 id="library-title">Library</h1>
      </div>
      <LibraryFilters filters={filters} devices={devices} onChange={setFilters} />
      <p class="visually-hidden" role="status">
        {page && !error ? (count === 0 ? 'No recordings' : `${count} recording${count === 1 ? '' : 's'}${page.nextCursor ? ', more available' : ''}`) : ''}
      </p>
      {applied.q.trim() !== '' && terms.length === 0 && (
        // The API finds recordings holding every word of q; a q of only emoji or punctuation has none.
        <p class="notice">
          “{applied.q.trim()}” has no letters or numbers to search for, so every recording is shown.
        </p>
      )}
      {error !== undefined ? (
        <LoadError what="your recordings" error={error} retry={load} />
      ) : page === null ? (
        <Loading what="your recordings" />
      ) : count === 0 ? (
        filtered ? (
          <Empty title="No recordings match.">
            <p>
              {applied.q.trim() ? 'Every word must appear in the title or the transcript; a word also finds longer words that start with it. ' : ''}
              Try fewer words or other filters.
            </p>
            <button type="button" class="button" onClick={() => setFilters(NO_FILTERS)}>
              Clear search and filters
            </button>
          </Empty>
        ) : (
          <Empty title="No recordings yet.">
            <p>
              Recordings arrive from your devices and apps. <a href={href.keys}>Create an API key</a> and point your app at{' '}
              <code>{location.origin}/api/v2/recordings</code>.
            </p>
            <p class="muted">
              The API reference, with a form to try each request, is at <a href="/docs">/docs</a>.
            </p>
          </Empty>
        )
      ) : (
        <div class={`results${busy ? ' is-busy' : ''}`} aria-busy={busy ? 'true' : undefined}>
          {groups.map((g) => (
            <section key={g.key} class="day" aria-labelledby={`day-${g.key}`}>
              <h2 id={`day-${g.key}`} class="day-title">
                {g.label}
              </h2>
              <div class="cards">
                {g.items.map((r) => (
                  <RecordingCard key={r.id} recording={r} terms={terms} />
                ))}
              </div>
            </section>
          ))}
          <ErrorAlert message={moreError} />
          {page.nextCursor && (
            <div class="load-more">
              <button type="button" class="button" onClick={loadMore} disabled={loadingMore}>
                Load more
              </button>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
