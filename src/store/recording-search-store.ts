// SQL for listing and searching recordings. Every shape reads in ascending seq order (= newest
// first) and stops after one page: a plain listing walks an (account_id[, filter]) index, whose
// entries end in seq; a text search lets FTS5 walk its index by rowid (= seq) in its natural
// ascending order and joins each hit to its row. Neither sorts, so a page costs the same at 1,000
// or 1,000,000 matches. One prepared statement per shape of filters, built on first use.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/open';
import type { RecordingRow } from '../services/recording-model';

export interface ListQuery {
  accountId: string;
  /** An FTS5 expression (built by recording-search.ts from the caller's text), or undefined. */
  match?: string | undefined;
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

export class RecordingSearchStore {
  private readonly cache = new Map<string, Statement<[Params], RecordingRow>>();

  constructor(private readonly db: Db) {}

  /** The SQL of one shape (exported for the query-plan tests). */
  static sql(shape: { match: boolean; type?: boolean; status?: boolean; deviceId?: boolean; source?: boolean }): string {
    const table = shape.match ? 'r' : 'recordings';
    const filters = FILTERS.filter(([k]) => shape[k]).map(([k, col]) => ` AND ${table}.${col} = @${k}`).join('');
    if (!shape.match) {
      return (
        'SELECT * FROM recordings WHERE account_id = @accountId AND deleted_at IS NULL' +
        filters +
        ' AND seq BETWEEN @lo AND @hi ORDER BY seq LIMIT @limit'
      );
    }
    // CROSS JOIN pins the FTS table as the outer loop, so its rowid order is the output order.
    return (
      'SELECT r.* FROM recordings_fts CROSS JOIN recordings AS r ON r.seq = recordings_fts.rowid' +
      ' WHERE recordings_fts MATCH @match AND recordings_fts.rowid BETWEEN @lo AND @hi' +
      ' AND r.account_id = @accountId AND r.deleted_at IS NULL' +
      filters +
      ' ORDER BY recordings_fts.rowid LIMIT @limit'
    );
  }

  /**
   * The rows of one page in order, read one at a time: `take` sees each row before it joins the
   * page and may end the page there (the byte bound of a page), so rows past it are never read.
   */
  page(q: ListQuery, take: (row: RecordingRow) => boolean = () => true): RecordingRow[] {
    const shape = {
      match: q.match !== undefined,
      type: q.type !== undefined,
      status: q.status !== undefined,
      deviceId: q.deviceId !== undefined,
      source: q.source !== undefined,
    };
    const key = Object.entries(shape)
      .map(([k, on]) => (on ? k : ''))
      .join('|');
    let stmt = this.cache.get(key);
    if (!stmt) {
      stmt = this.db.prepare<[Params], RecordingRow>(RecordingSearchStore.sql(shape));
      this.cache.set(key, stmt);
    }
    const params: Params = { accountId: q.accountId, lo: q.lo, hi: q.hi, limit: q.limit };
    if (q.match !== undefined) params.match = q.match;
    for (const [k] of FILTERS) {
      const value = q[k];
      if (value !== undefined) params[k] = value;
    }
    const rows: RecordingRow[] = [];
    for (const row of stmt.iterate(params)) {
      if (!take(row)) break;
      rows.push(row);
    }
    return rows;
  }
}
