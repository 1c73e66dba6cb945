// SQL for listing and searching recordings. Every shape reads in ascending seq order (= newest
// first) and stops after one page: a plain listing walks an (account_id[, filter]) index, whose
// entries end in the table key pos = -seq, backwards (one prepared statement per shape of filters,
// built on first use); a text
// search lets FTS5 walk its index by rowid (= seq) in its natural ascending order and joins each
// hit to its row (candidates()). Neither sorts, so a page costs the same at 1,000 or 1,000,000
// matches. The search applies no other condition in SQL, so that each step of the walk returns
// after one index entry and the caller can stop it (recording-search.ts).
import type { Db } from '../db/open';
import { recordingColumns, type RecordingRow } from './recording-row';
import { limitTo } from './bound-limit';
import { objectRows, type ObjectRows } from './object-rows';

export interface ListQuery {
  accountId: string;
  type?: string | undefined;
  status?: string | undefined;
  deviceId?: string | undefined;
  source?: string | undefined;
  /** Inclusive sort-key bounds. */
  lo: number;
  hi: number;
  limit: number;
}

type Params = Record<string, string | number>;

const FILTERS = [
  ['type', 'type'],
  ['status', 'status'],
  ['deviceId', 'device_id'],
  ['source', 'source'],
] as const;

/** A row of a plain listing before its text is read: its sort key and the bytes of its text. */
export interface RowSize {
  seq: number;
  bytes: number;
}

/**
 * The UTF-8 bytes of a row's text, from the record header alone: SQLite does not load a value
 * that only octet_length() reads, so a 1 MB transcript's overflow pages stay unread (measured:
 * 0.1 ms for 30 rows of 1 MB, against 48 ms for reading them).
 */
const TEXT_BYTES = 'octet_length(title) + octet_length(transcript) + octet_length(summary) + octet_length(audio)';

export class RecordingSearchStore {
  // Rows are read through objectRows(): a page or a search reads tens of rows of 26 columns.
  private readonly cache = new Map<string, ObjectRows<[Params], RecordingRow>>();
  private readonly sizeCache = new Map<string, ObjectRows<[Params], RowSize>>();
  private candidatesStmt: ObjectRows<[Params], RecordingRow> | undefined;
  private scanStmt: ObjectRows<[Params], RecordingRow> | undefined;
  private readonly rowStmt;
  private readonly snapshot;

  constructor(private readonly db: Db) {
    this.rowStmt = objectRows(db.prepare<[number, string], RecordingRow>(RecordingSearchStore.ROW_SQL));
    this.snapshot = db.transaction((read: () => unknown) => read());
  }

  /** The SQL of one shape of a plain listing (exported for the query-plan tests). */
  static sql(shape: { type?: boolean; status?: boolean; deviceId?: boolean; source?: boolean }, columns = recordingColumns()): string {
    const filters = FILTERS.filter(([k]) => shape[k]).map(([k, col]) => ` AND ${col} = @${k}`).join('');
    return (
      `SELECT ${columns} FROM recordings WHERE account_id = @accountId AND deleted_at IS NULL` +
      filters +
      ` AND pos BETWEEN -@hi AND -@lo ORDER BY pos DESC ${limitTo('@limit')}`
    );
  }

  /** The SQL of sizes() for one shape (exported for the query-plan tests). */
  static sizesSql(shape: Parameters<typeof RecordingSearchStore.sql>[0]): string {
    return RecordingSearchStore.sql(shape, `seq, ${TEXT_BYTES} AS bytes`);
  }

  /** The SQL of row() (exported for the query-plan tests). */
  static readonly ROW_SQL = `SELECT ${recordingColumns()} FROM recordings WHERE pos = -? AND account_id = ? AND deleted_at IS NULL`;

  /** A plain listing's rows as sort keys and text sizes, without reading the text. */
  sizes(q: ListQuery): RowSize[] {
    const shape = RecordingSearchStore.shape(q);
    const key = RecordingSearchStore.shapeKey(shape);
    let stmt = this.sizeCache.get(key);
    if (!stmt) {
      stmt = objectRows(this.db.prepare<[Params], RowSize>(RecordingSearchStore.sizesSql(shape)));
      this.sizeCache.set(key, stmt);
    }
    return stmt.all(RecordingSearchStore.params(q));
  }

  /** One live row of the account by its sort key (undefined once deleted). */
  row(accountId: string, seq: number): RecordingRow | undefined {
    return this.rowStmt.get(seq, accountId);
  }

  /** The SQL of candidates() (exported for the query-plan tests). */
  static readonly CANDIDATES_SQL =
    `SELECT ${recordingColumns('r')} FROM recordings_fts CROSS JOIN recordings AS r ON r.pos = -recordings_fts.rowid` +
    ` WHERE recordings_fts MATCH @match AND recordings_fts.rowid BETWEEN @lo AND @hi ORDER BY recordings_fts.rowid ${limitTo('@limit')}`;

  /**
   * Every row the FTS5 expression returns with seq in lo..hi, in seq order, at most `limit`, read
   * one at a time. No other condition is applied in SQL: a filter that matches few rows would make
   * one step walk the index until it found one. Run nothing else on the connection while iterating.
   */
  candidates(match: string, lo: number, hi: number, limit: number): IterableIterator<RecordingRow> {
    this.candidatesStmt ??= objectRows(this.db.prepare<[Params], RecordingRow>(RecordingSearchStore.CANDIDATES_SQL));
    return this.candidatesStmt.iterate({ match, lo, hi, limit });
  }

  /**
   * The account's live rows with seq in lo..hi, in seq order, at most `limit`, read one at a time:
   * the candidates of a search no FTS5 expression can narrow. Run nothing else on the connection
   * while iterating.
   */
  scan(accountId: string, lo: number, hi: number, limit: number): IterableIterator<RecordingRow> {
    this.scanStmt ??= objectRows(this.db.prepare<[Params], RecordingRow>(RecordingSearchStore.sql({})));
    return this.scanStmt.iterate({ accountId, lo, hi, limit });
  }

  /**
   * The rows of a plain listing in order, in one read of their range (at 1M recordings 50 rows
   * took ~7 µs each so, against ~13 µs each read one by one by key with row()).
   */
  page(q: ListQuery): RecordingRow[] {
    const shape = RecordingSearchStore.shape(q);
    const key = RecordingSearchStore.shapeKey(shape);
    let stmt = this.cache.get(key);
    if (!stmt) {
      stmt = objectRows(this.db.prepare<[Params], RecordingRow>(RecordingSearchStore.sql(shape)));
      this.cache.set(key, stmt);
    }
    return stmt.all(RecordingSearchStore.params(q));
  }

  /**
   * `read`'s statements in one snapshot of the database (a read transaction; a savepoint inside
   * one already open): what the first saw, the next see too, whatever another connection commits
   * meanwhile.
   */
  inSnapshot<T>(read: () => T): T {
    return this.snapshot(read) as T;
  }

  private static shape(q: ListQuery) {
    return { type: q.type !== undefined, status: q.status !== undefined, deviceId: q.deviceId !== undefined, source: q.source !== undefined };
  }

  private static shapeKey(shape: ReturnType<typeof RecordingSearchStore.shape>): string {
    return Object.entries(shape)
      .map(([k, on]) => (on ? k : ''))
      .join('|');
  }

  private static params(q: ListQuery): Params {
    const params: Params = { accountId: q.accountId, lo: q.lo, hi: q.hi, limit: q.limit };
    for (const [k] of FILTERS) {
      const value = q[k];
      if (value !== undefined) params[k] = value;
    }
    return params;
  }
}
