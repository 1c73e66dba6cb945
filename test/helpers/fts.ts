// The search index as tests look at it: FTS5's own integrity-check, and the rowids an FTS5 query
// returns straight from the index (no search plan, no budget).
import type { Db } from '../../src/db/open';

/** Throws (SQLITE_CORRUPT_VTAB) unless the index agrees with the table, per-column token totals included. */
export function integrityCheck(db: Db): void {
  db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
}

/** The rowids (seq) the index returns for an FTS5 query, in order. */
export const matches = (db: Db, query: string): number[] =>
  (db.prepare('SELECT rowid FROM recordings_fts WHERE recordings_fts MATCH ? ORDER BY rowid').all(query) as Array<{ rowid: number }>).map((r) => r.rowid);
