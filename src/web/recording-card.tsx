// One recording in the library: an article whose heading links to it; type, time, status and pin
// readable at a glance; the matched words of the search marked in title and excerpt.
import type { Recording } from './api-types';
import { Highlighted } from './highlighted';
import { href } from './route';
import { excerpt, type parseQuery } from './search-match';
import { clockTime, isoTime } from './time-format';
import { statusLabel } from './vocabulary';

type Terms = ReturnType<typeof parseQuery>;

/** What a recording is called in lists: its title, else its first words, else its type. */
export function displayTitle(r: Recording): string {
  if (r.title.trim()) return r.title;
  return r.type === 'clip' ? 'Untitled clip' : 'Untitled memo';
}

export function TypeBadge({ type }: { type: Recording['type'] }) {
  return <span class={`badge badge-${type}`}>{type === 'clip' ? 'Clip' : 'Memo'}</span>;
}

export function RecordingCard({ recording: r, terms }: { recording: Recording; terms: Terms }) {
  const headingId = `rec-${r.id}`;
  const text = r.transcript || r.summary;
  return (
    <article class={`recording-card${r.pinned ? ' is-pinned' : ''}`} aria-labelledby={headingId}>
      <div class="card-meta">
        <TypeBadge type={r.type} />
        <time dateTime={isoTime(r.recordedAt)}>{clockTime(r.recordedAt)}</time>
        {r.status !== 'ready' && <span class={`status status-${r.status}`}>{statusLabel(r.status)}</span>}
        {r.pinned && <span class="pin">Pinned</span>}
      </div>
      <h3 id={headingId} class="card-title">
        <a href={href.recording(r.id)} dir="auto">
          <Highlighted text={displayTitle(r)} terms={r.title.trim() ? terms : []} />
        </a>
      </h3>
      {text ? (
        <p class="card-excerpt" dir="auto">
          <Highlighted text={excerpt(text, terms)} terms={terms} />
        </p>
      ) : (
        <p class="card-excerpt muted">{r.status === 'pending' || r.status === 'transcribing' ? 'Waiting for the transcript…' : 'No transcript.'}</p>
      )}
    </article>
  );
}
