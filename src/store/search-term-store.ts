// SQL for recording_terms: the word forms the FTS index has seen (see schema.sql).
import type { Db } from '../db/open';

/** A bound above every string that starts with `prefix` (U+10FFFF is the largest code point). */
export const after = (prefix: string): string => `${prefix}\u{10FFFF}\u{10FFFF}`;

export class SearchTermStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      add: db.prepare<[string]>('INSERT OR IGNORE INTO recording_terms (term) VALUES (?)'),
      remove: db.prepare<[string]>('DELETE FROM recording_terms WHERE term = ?'),
      // Whether any live recording still has this word (FTS5 folds case and accents the same way).
      indexed: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM recordings_fts WHERE recordings_fts MATCH ? LIMIT 1'),
      next: db.prepare<[string], { term: string }>('SELECT term FROM recording_terms WHERE term > ? ORDER BY term LIMIT 1'),
      range: db.prepare<[string, string, number], { term: string }>(
        'SELECT term FROM recording_terms WHERE term >= ? AND term < ? ORDER BY term LIMIT ?',
      ),
    };
  }

  add(term: string): void {
    this.s.add.run(term);
  }

  remove(term: string): void {
    this.s.remove.run(term);
  }

  /** Whether the FTS index still holds the word (a quoted FTS5 string, so never syntax). */
  stillIndexed(word: string): boolean {
    return this.s.indexed.get(`"${word.replace(/"/g, '""')}"`) !== undefined;
  }

  /** The first term after `from`, if any. */
  next(from: string): string | undefined {
    return this.s.next.get(from)?.term;
  }

  /** Up to `limit` terms that start with `prefix`, in order. */
  withPrefix(prefix: string, limit: number): string[] {
    return this.s.range.all(prefix, after(prefix), limit).map((r) => r.term);
  }
}
