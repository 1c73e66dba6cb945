// Search and paging of the library (CONTRACT §5 "GET /recordings", "q").
//
// q: every word must appear in the title or the transcript (AND); a word matches any indexed word
// it is a prefix of ("meet" finds "meeting"), case- and accent-insensitively; "double quotes" make
// an exact phrase. A one-character word (any script) matches only itself, since as a prefix it
// would match nearly everything. Text without words (only punctuation) sets no condition. Nothing
// from q reaches FTS5 as syntax: every word is re-emitted as a quoted string.
//
// Cost is bounded by the distinct conditions, not by the length of q: a repeated word is one
// condition, and a word that is a prefix of another word of q is dropped (every recording with a
// word starting with "meeting" has one starting with "meet"). The prefix words left are pairwise
// unrelated, so FTS5 reads the doclist of each indexed word for at most one of them.
//
// Paging: newest first by recordedAt, the later created first among equal times: ascending order of
// the sort key seq (see schema.sql and recording-model.ts). The cursor is the last seq of the page
// plus a digest of the filters it was made for, so it can only continue the same search; a page
// always reflects the current data.
import { invalid } from '../errors';
import { sha256Hex } from '../ids';
import type { RecordingSearchStore } from '../store/recording-search-store';
import { canonicalJson, seqRange, type RecordingRow } from './recording-model';
import { textWords, withoutDiacritics, type SearchTerms } from './search-terms';

export interface SearchFilters {
  type?: string | undefined;
  q?: string | undefined;
  deviceId?: string | undefined;
  status?: string | undefined;
  /** v1 filter. */
  source?: string | undefined;
  /** Inclusive capture-time bounds, Unix ms. */
  from?: number | undefined;
  to?: number | undefined;
}

export interface ListInput extends SearchFilters {
  limit: number;
  cursor?: string | undefined;
}

/** Length of the FTS5 prefix index in schema.sql (prefix = '3'). */
const PREFIX_INDEX_CHARS = 3;
/** Up to this many whole-word expansions are ORed; a wider prefix uses FTS5's own prefix query. */
const MAX_EXPANSIONS = 48;
const ASCII_WORD = /^[a-z0-9]+$/;
const CURSOR_PREFIX = 'rc1.';

const quote = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** q → its words and quoted phrases. An unmatched quote opens a phrase that runs to the end. */
export function parseQuery(q: string): Array<{ phrase: boolean; words: string[] }> {
  const parts = q.split('"');
  const out: Array<{ phrase: boolean; words: string[] }> = [];
  parts.forEach((part, i) => {
    const words = textWords(part);
    if (words.length === 0) return;
    if (i % 2 === 1) out.push({ phrase: true, words });
    else for (const w of words) out.push({ phrase: false, words: [w] });
  });
  return out;
}

/**
 * The FTS5 expression for q: '' when q has no words (no text condition), null when some word
 * cannot match anything (the page is empty without asking FTS5).
 */
export function matchExpression(q: string, terms: Pick<SearchTerms, 'expansions' | 'continuations'>): string | null {
  // A Set: the same condition twice is one condition (AND is idempotent).
  const clauses = new Set<string>();
  for (const item of conditions(q)) {
    if (item.phrase) clauses.add(quote(item.words.join(' ')));
    else if (item.exact) clauses.add(quote(item.word));
    else if (ASCII_WORD.test(item.word) && item.word.length !== PREFIX_INDEX_CHARS) {
      const clause = expandedWord(item.word, terms);
      if (clause === null) return null;
      clauses.add(clause);
    } else clauses.add(`${quote(item.word)}*`);
  }
  return [...clauses].join(' AND ');
}

type Condition = { phrase: true; words: string[] } | { phrase: false; word: string; folded: string; exact: boolean };

/**
 * The words and phrases of q as conditions: each word in the form the index is searched with, one-
 * character words exact, repeats and prefix words implied by a longer word of q left out.
 */
function conditions(q: string): Condition[] {
  const items: Condition[] = parseQuery(q).map((item) => {
    if (item.phrase) return { phrase: true, words: item.words };
    // "Café" and "cafe" are the same word to FTS5 (remove_diacritics 2), so a word that is ASCII
    // without its diacritics takes the ASCII path and its lazy expansion.
    const original = item.words[0]!;
    const folded = withoutDiacritics(original);
    const word = ASCII_WORD.test(folded) ? folded : original;
    // One character as a prefix would match nearly every word of its script (an FTS5 prefix query
    // with no prefix index merges the doclists of all of them): only the word itself.
    return { phrase: false, word, folded, exact: [...word].length === 1 };
  });
  const prefixes = items.filter((i): i is Extract<Condition, { phrase: false }> => !i.phrase && !i.exact);
  return items.filter((i) => i.phrase || i.exact || !prefixes.some((longer) => longer.folded.length > i.folded.length && longer.folded.startsWith(i.folded)));
}

/**
 * An ASCII word as an OR that FTS5 reads lazily: of the whole words it starts, or, for a shorter
 * word with too many of those, of its three-character continuations (each served by the prefix
 * index). Only when neither fits does FTS5 get the plain prefix query (correct, but it merges every
 * match before the first page). null: no indexed word starts with it.
 */
function expandedWord(word: string, terms: Pick<SearchTerms, 'expansions' | 'continuations'>): string | null {
  const forms = terms.expansions(word, MAX_EXPANSIONS + 1);
  if (forms.length === 0) return null;
  if (forms.length <= MAX_EXPANSIONS) return `(${forms.map(quote).join(' OR ')})`;
  if (word.length < PREFIX_INDEX_CHARS) {
    const heads = terms.continuations(word, PREFIX_INDEX_CHARS, MAX_EXPANSIONS);
    if (heads.length <= MAX_EXPANSIONS) {
      return `(${heads.map((h) => ([...h].length < PREFIX_INDEX_CHARS ? quote(h) : `${quote(h)}*`)).join(' OR ')})`;
    }
  }
  return `${quote(word)}*`;
}

const filterKey = (f: SearchFilters): string =>
  sha256Hex(canonicalJson({ type: f.type, q: f.q, deviceId: f.deviceId, status: f.status, source: f.source, from: f.from, to: f.to })).slice(0, 16);

export const encodeCursor = (seq: number, filters: SearchFilters): string =>
  CURSOR_PREFIX + Buffer.from(`${seq}.${filterKey(filters)}`).toString('base64url');

/** The seq a cursor continues after; 400 for anything that is not a cursor of these filters. */
export function decodeCursor(cursor: string, filters: SearchFilters): number {
  if (cursor.startsWith(CURSOR_PREFIX) && cursor.length <= 64) {
    const m = /^(\d{1,16})\.([0-9a-f]{16})$/.exec(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('latin1'));
    if (m && CURSOR_PREFIX + Buffer.from(`${m[1]}.${m[2]}`).toString('base64url') === cursor) {
      if (m[2] !== filterKey(filters)) throw invalid('cursor: it was issued for other filters; repeat the same filters or start without a cursor');
      return Number(m[1]);
    }
  }
  throw invalid('cursor: not a cursor returned by GET /recordings');
}

/** Filters as compared by cursors: an empty or blank q is no q. */
export const normalizeFilters = (f: SearchFilters): SearchFilters => ({
  type: f.type,
  q: f.q !== undefined && f.q.trim() !== '' ? f.q : undefined,
  deviceId: f.deviceId,
  status: f.status,
  source: f.source,
  from: f.from,
  to: f.to,
});

export function listPage(
  store: RecordingSearchStore,
  terms: Pick<SearchTerms, 'expansions' | 'continuations'>,
  accountId: string,
  input: ListInput,
): { rows: RecordingRow[]; nextCursor: string | null } {
  const filters = normalizeFilters(input);
  const empty = { rows: [], nextCursor: null };
  const range = seqRange(input.from, input.to);
  if (range === null) return empty;
  let [lo, hi] = range;
  // Newest first is ascending seq: the next page starts after the cursor's key.
  if (input.cursor !== undefined) lo = Math.max(lo, decodeCursor(input.cursor, filters) + 1);
  if (lo > hi) return empty;
  let match: string | undefined;
  if (filters.q !== undefined) {
    const expr = matchExpression(filters.q, terms);
    if (expr === null) return empty;
    if (expr !== '') match = expr;
  }
  // One row past the limit says whether another page exists; a row that would take the page past
  // PAGE_BYTES ends it early (it is the first of the next page), unless the page is still empty.
  let bytes = 0;
  let full = false;
  const rows = store.page(
    {
      accountId,
      match,
      type: filters.type,
      status: filters.status,
      deviceId: filters.deviceId,
      source: filters.source,
      lo,
      hi,
      limit: input.limit + 1,
    },
    (row) => {
      const size = jsonBytes(row);
      full = bytes > 0 && bytes + size > PAGE_BYTES;
      bytes += size;
      return !full;
    },
  );
  if (!full && rows.length <= input.limit) return { rows, nextCursor: null };
  const page = rows.slice(0, input.limit);
  return { rows: page, nextCursor: encodeCursor(page[page.length - 1]!.seq, filters) };
}

/**
 * About how many bytes of JSON a page may hold (CONTRACT §12): one page of 100 recordings with
 * 1.5 MB transcripts would otherwise be a 150 MB answer, built in memory and held until a slow
 * client has read it. A page cut short by this bound has a nextCursor, like any page but the last.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;

/** A row's size in its JSON answers, near enough: its text in UTF-8 plus the fixed fields. */
const jsonBytes = (row: RecordingRow): number =>
  Buffer.byteLength(row.title) + Buffer.byteLength(row.transcript) + Buffer.byteLength(row.summary) + row.audio.length + 512;
