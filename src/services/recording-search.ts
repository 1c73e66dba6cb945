// Search and paging of the library (docs/decisions.md §5 "GET /recordings", "q").
//
// q: every word must appear in the title or the transcript (AND); a word matches any indexed word
// it is a prefix of ("meet" finds "meeting"), case- and accent-insensitively; "double quotes" make
// an exact phrase. A one-character word (any script) matches only itself, since as a prefix it
// would match nearly everything. Text without words (only punctuation) sets no condition. Nothing
// from q reaches FTS5 as syntax: every word is re-emitted as a quoted string.
//
// Cost is bounded by the distinct conditions, not by the length of q: a repeated word is one
// condition, and a word that is a prefix of another word of q is dropped (every recording with a
// word starting with "meeting" has one starting with "meet"); see search-plan.ts.
//
// The work of one page is bounded too (SEARCH_BUDGET): FTS5 walks, in rowid order, the AND of an
// expression per condition that it reads lazily (search-plan.ts), and each candidate is tested for
// the filters and for the conditions that expression only approximates (a phrase's word order, a
// wide prefix); when the budget is spent before the page is full, the page ends there, shorter
// than limit or even empty, with a nextCursor after the last candidate read. Paging on returns
// every match exactly once.
//
// Paging: newest first by recordedAt, the later created first among equal times: ascending order of
// the sort key seq (see schema.sql and recording-model.ts). The cursor is the last seq the page
// covered (its last row, or the last candidate a search read) plus a digest of the filters it was
// made for, sealed for the account (search-cursor.ts), so it can only continue the same search of
// the same account; a page always reflects the current data.
import { invalid } from '../errors';
import { sha256Hex } from '../ids';
import type { RecordingSearchStore } from '../store/recording-search-store';
import { canonicalJson, seqRange, type RecordingRow } from './recording-model';
import { foldsLikeIndex, searchConditions, type Condition } from './search-plan';
import type { SearchCursors } from './search-cursor';
import type { SearchTerms } from './search-terms';

export { matchExpression, parseQuery } from './search-plan';

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

const filterKey = (f: SearchFilters): string =>
  sha256Hex(canonicalJson({ type: f.type, q: f.q, deviceId: f.deviceId, status: f.status, source: f.source, from: f.from, to: f.to })).slice(0, 16);

/** Makes the cursors of one account's listing with these filters: `cursor(seq)` continues after seq. */
const cursorsFor = (cursors: SearchCursors, accountId: string, filters: SearchFilters) => {
  const key = filterKey(filters);
  return (seq: number): string => cursors.seal(accountId, seq, key);
};

/** The seq a cursor continues after; 400 for anything that is not a cursor of this account and these filters. */
function decodeCursor(cursors: SearchCursors, accountId: string, cursor: string, filters: SearchFilters): number {
  const opened = cursors.open(accountId, cursor);
  if (opened === undefined) throw invalid('cursor: not a cursor returned by GET /recordings for this account');
  if (opened.filters !== filterKey(filters)) throw invalid('cursor: it was issued for other filters; repeat the same filters or start without a cursor');
  return opened.seq;
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

/**
 * How much one search page may read before it answers with what it found. Candidates are rows of
 * the walked condition (each one FTS5 step, one row read and its tests); time is checked after each
 * once `minCandidates` have been read, so a small library (or a test) is never cut short by a
 * stall of the machine, and every page moves on.
 */
export interface SearchBudget {
  candidates: number;
  minCandidates: number;
  ms: number;
  /** Rows read in order to judge how dense the matches are past a cursor (see searchPage()). */
  probeRows: number;
  /** Clock of the time bound (ms); tests inject one that never moves, so only candidates count. */
  now: () => number;
}

/**
 * A candidate costs 10-60 µs at 100,000 recordings and 55-80 µs at 1M, where its row is often
 * not in the page cache (reading it is most of the cost). A page stops after about 3 ms of reading
 * (it was 5 ms), once 32 candidates are read (it was 100): a search whose matches are sparse spends
 * the whole budget on every page, on the event loop every other request shares. At half its
 * saturated rate the phrase "the of and to a" answered 16.9 ms p99 at 1M with 5 ms (target 15),
 * and at 1M the 100-candidate floor alone took 5.7-8.2 ms p50 on pages past a cursor, 3.2 ms with
 * 32 (in process). The price: paging through a sparse search of the whole library takes up to
 * twice as many pages. The candidate count is a second bound.
 */
export const SEARCH_BUDGET: SearchBudget = { candidates: 5000, minCandidates: 32, ms: 3, probeRows: 64, now: () => performance.now() };

/**
 * Past a cursor, when at least 1 row in DENSE_ONE_IN read in order is one FTS5 would return, the
 * rows are read in order rather than through FTS5 (see searchPage()).
 */
const DENSE_ONE_IN = 4;

/**
 * One page. `later` holds the sort keys of a large page's rows, in order after `rows`, to be read
 * one at a time as the page is written (http/page-answer.ts): reading megabytes of text in one
 * turn of the event loop held every other request for tens of milliseconds.
 */
export type Page = { rows: RecordingRow[]; later?: number[]; nextCursor: string | null };

export function listPage(
  store: RecordingSearchStore,
  terms: Pick<SearchTerms, 'expansions'>,
  cursors: SearchCursors,
  accountId: string,
  input: ListInput,
  budget: SearchBudget = SEARCH_BUDGET,
): Page {
  const filters = normalizeFilters(input);
  const encodeCursor = cursorsFor(cursors, accountId, filters);
  const empty = { rows: [], nextCursor: null };
  const range = seqRange(input.from, input.to);
  if (range === null) return empty;
  let [lo, hi] = range;
  // Newest first is ascending seq: the next page starts after the cursor's key.
  if (input.cursor !== undefined) lo = Math.max(lo, decodeCursor(cursors, accountId, input.cursor, filters) + 1);
  if (lo > hi) return empty;
  const conditions = filters.q === undefined ? [] : searchConditions(filters.q, terms);
  if (conditions === null) return empty;
  // A lower bound on seq (a cursor, or `to`) puts the page somewhere inside the matches.
  const inside = input.cursor !== undefined || input.to !== undefined;
  if (conditions.length > 0) {
    const plan = { conditions, queryFoldsLikeIndex: foldsLikeIndex(filters.q!) };
    return searchPage(store, accountId, filters, encodeCursor, input.limit, lo, hi, inside, plan, budget);
  }
  // The page is decided on the rows' sizes, before any text is read. One row past the limit says
  // whether another page exists; a row that would take the page past PAGE_BYTES ends it early (it
  // is the first of the next page), unless the page is still empty.
  const query = { accountId, type: filters.type, status: filters.status, deviceId: filters.deviceId, source: filters.source, lo, hi };
  return store.inSnapshot((): Page => {
    const sizes = store.sizes({ ...query, limit: input.limit + 1 });
    let bytes = 0;
    let count = 0;
    for (const { bytes: text } of sizes) {
      const size = text + ROW_OVERHEAD_BYTES;
      if (count === input.limit || (count > 0 && bytes + size > PAGE_BYTES)) break;
      bytes += size;
      count++;
    }
    const keys = sizes.slice(0, count).map((s) => s.seq);
    const nextCursor = count < sizes.length ? encodeCursor(keys[count - 1]!) : null;
    // A large page's rows are read as it is written (a row deleted by then is left out; the cursor
    // still continues after the keys).
    if (bytes >= LAZY_FROM_BYTES) return { rows: [], later: keys, nextCursor };
    // A small one's in one read of the keys' range, in the snapshot the sizes were read in: the same rows.
    return { rows: count === 0 ? [] : store.page({ ...query, lo: keys[0]!, hi: keys[count - 1]!, limit: count }), nextCursor };
  });
}

/** Pages with at least this much text are streamed; a listing leaves their rows to be read while the page is written. */
export const LAZY_FROM_BYTES = 256 * 1024;

/** The byte bound of a page: take() answers whether a row still fits (the first always does). */
function pageBytes() {
  const state = { bytes: 0, full: false, take: (row: RecordingRow) => true as boolean };
  state.take = (row) => {
    const size = jsonBytes(row);
    state.full = state.bytes > 0 && state.bytes + size > PAGE_BYTES;
    state.bytes += size;
    return !state.full;
  };
  return state;
}

function searchPage(
  store: RecordingSearchStore,
  accountId: string,
  filters: SearchFilters,
  encodeCursor: (seq: number) => string,
  limit: number,
  lo: number,
  hi: number,
  inside: boolean,
  { conditions, queryFoldsLikeIndex }: { conditions: Condition[]; queryFoldsLikeIndex: boolean },
  budget: SearchBudget,
): Page {
  const start = budget.now();
  // A condition FTS5 cannot read lazily (it would merge first) is tested on the text instead, unless
  // no condition can be read lazily: then FTS5 answers one condition as best it can, or, when it
  // cannot be asked at all (words its tokenizer does not see as words), the account's recordings
  // are read in order and every condition is tested on the text (bounded by the budget like any walk).
  let walked = conditions.filter((c) => c.walk !== null);
  let expr = [...new Set(walked.map((c) => c.walk!))].join(' AND ');
  if (walked.length === 0) {
    const eager = conditions.find((c) => c.eager !== null);
    walked = eager ? [eager] : [];
    expr = eager?.eager ?? '';
  }
  const tests = conditions.filter((c) => !walked.includes(c) || !c.exact).map((c) => c.test);
  const allTests = conditions.map((c) => c.test);
  // Whether FTS5 would return the row: what the walked conditions' expressions find.
  const walkTests = walked.map((c) => (c.exact ? c.test : (c.walkTest ?? c.test)));
  // Once walkTests hold, what is left of allTests: a walked condition whose walkTest is its test
  // holds already (a phrase's test implies its walkTest, the AND of its words, so not the reverse).
  const beyondWalk = conditions.filter((c) => !walked.includes(c) || (!c.exact && c.walkTest !== undefined)).map((c) => c.test);
  // The text tests fold some characters otherwise than FTS5 (search-plan.ts, foldsLikeIndex): a
  // row holding one, or any row of a query holding one, is never judged by the tests where FTS5
  // can be asked, or "ещё" found "еще" on pages read in order and not on pages FTS5 walked, and a
  // walk skipped or repeated rows depending on its limit and the machine's speed. Reading in order
  // stops before such a row, and FTS5 walks on from it (one walk a page; a lookup per row cost up
  // to 11 ms each deep in a large index).
  const foldsAlike = (row: RecordingRow): boolean => foldsLikeIndex(row.title) && foldsLikeIndex(row.transcript);
  // Set by the density probe for the row it hands over: whether walkTests hold, tested once there.
  let walkMet: boolean | undefined;
  const meetsAll = (row: RecordingRow): boolean =>
    walkMet === undefined ? allTests.every((test) => test(row)) : walkMet && beyondWalk.every((test) => test(row));
  // Whether the row at hand was read in order (every condition tested) or found by FTS5.
  let inOrder = expr === '';
  const accepts = (row: RecordingRow): boolean =>
    row.account_id === accountId &&
    row.deleted_at === null &&
    (filters.type === undefined || row.type === filters.type) &&
    (filters.status === undefined || row.status === filters.status) &&
    (filters.deviceId === undefined || row.device_id === filters.deviceId) &&
    (filters.source === undefined || row.source === filters.source) &&
    (inOrder ? meetsAll(row) : tests.every((test) => test(row)));
  const bytes = pageBytes();
  const rows: RecordingRow[] = [];
  // At least one candidate per page, whatever the clock says, so that paging always moves on.
  budget = { ...budget, candidates: Math.max(1, budget.candidates), minCandidates: Math.max(1, budget.minCandidates) };
  let read = 0;
  let lastRead = lo - 1;
  let spent = false;
  const limitRows = budget.candidates + 1;
  /**
   * FTS5 finds the first row past a rowid bound by reading each walked word's postings from their
   * start (measured at 100,000 recordings: "the" 0.2 ms for the first page, 10 ms past 99% of the
   * library; ten times that at a million). So past a cursor a page reads probeRows rows in order
   * first: when at least one in DENSE_ONE_IN is a row FTS5 would return, FTS5 would hand over a
   * good share of the rows anyway, and the page goes on reading them in order, testing every
   * condition; otherwise FTS5 goes on from the last row read, through postings short enough to seek.
   */
  function* inOrderOrIndexed(): Generator<RecordingRow> {
    if (expr === '') return yield* store.scan(accountId, lo, hi, limitRows);
    if (!inside || !queryFoldsLikeIndex) return yield* store.candidates(expr, lo, hi, limitRows);
    /** FTS5 from `from` on (a row the tests would fold otherwise than FTS5, or past the probe). */
    const indexed = (from: number) => {
      inOrder = false;
      walkMet = undefined;
      return store.candidates(expr, from, hi, limitRows);
    };
    inOrder = true;
    let probed = 0;
    let walkable = 0;
    let last = lo - 1;
    for (const row of store.scan(accountId, lo, hi, budget.probeRows)) {
      if (!foldsAlike(row)) return yield* indexed(row.seq);
      probed++;
      last = row.seq;
      walkMet = walkTests.every((test) => test(row));
      if (walkMet) walkable++;
      yield row;
    }
    walkMet = undefined;
    if (probed < budget.probeRows || last >= hi) return;
    if (walkable * DENSE_ONE_IN < probed) return yield* indexed(last + 1);
    for (const row of store.scan(accountId, last + 1, hi, limitRows)) {
      if (!foldsAlike(row)) return yield* indexed(row.seq);
      yield row;
    }
  }
  for (const row of inOrderOrIndexed()) {
    if (read >= budget.candidates || (read >= budget.minCandidates && budget.now() - start >= budget.ms)) {
      spent = true;
      break;
    }
    read++;
    lastRead = row.seq;
    if (!accepts(row)) continue;
    if (!bytes.take(row)) break;
    rows.push(row);
    // One row past the limit says whether another page exists.
    if (rows.length > limit) break;
  }
  if (rows.length > limit) return { rows: rows.slice(0, limit), nextCursor: encodeCursor(rows[limit - 1]!.seq) };
  if (bytes.full) return { rows, nextCursor: encodeCursor(rows[rows.length - 1]!.seq) };
  // Every candidate up to lastRead was read: the next page continues after it. (lastRead may be
  // another account's recording: the cursor is sealed, search-cursor.ts.)
  if (spent) return { rows, nextCursor: encodeCursor(lastRead) };
  return { rows, nextCursor: null };
}

/**
 * About how many bytes of JSON a page may hold (docs/decisions.md §12): one page of 100 recordings with
 * 1.5 MB transcripts would otherwise be a 150 MB answer, built in memory and held until a slow
 * client has read it. A page cut short by this bound has a nextCursor, like any page but the last.
 */
export const PAGE_BYTES = 4 * 1024 * 1024;

/** What a row's JSON holds besides its text (ids, times, keys, quotes), near enough. */
const ROW_OVERHEAD_BYTES = 512;

/** A row's size in its JSON answers, near enough: its text in UTF-8 plus the fixed fields. */
const jsonBytes = (row: RecordingRow): number =>
  Buffer.byteLength(row.title) + Buffer.byteLength(row.transcript) + Buffer.byteLength(row.summary) + Buffer.byteLength(row.audio) + ROW_OVERHEAD_BYTES;
