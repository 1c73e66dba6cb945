// SQL for recording_terms: the word forms the FTS index has seen (see schema.sql).
import type { Db } from '../db/open';
import { ftsQuote } from './fts-quote';
import { limitTo } from './bound-limit';

/** A bound above every string that starts with `prefix` (U+10FFFF is the largest code point). */
export const after = (prefix: string): string => `${prefix}\u{10FFFF}\u{10FFFF}`;

export class SearchTermStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      add: db.prepare<[string]>('INSERT OR IGNORE INTO recording_terms (term) VALUES (?)'),
      remove: db.prepare<[string]>('DELETE FROM recording_terms WHERE term = ?'),
      has: db.prepare<[string], number>('SELECT 1 FROM recording_terms WHERE term = ?').pluck(),
      // A live recording that still has this word, the newest (FTS5 folds case and accents the same way).
      indexed: db.prepare<[string], { seq: number }>('SELECT rowid AS seq FROM recordings_fts WHERE recordings_fts MATCH ? LIMIT 1'),
      liveText: db.prepare<[number], { title: string; transcript: string }>('SELECT title, transcript FROM recordings WHERE pos = -? AND deleted_at IS NULL'),
      // Parsing only (no rowid is 0): FTS5 rejects a quoted string of two or more tokens (detail=none).
      probe: db.prepare<[string]>('SELECT 1 FROM recordings_fts WHERE recordings_fts MATCH ? AND rowid = 0'),
      // Live rows that have every token of a word FTS5 splits (see stillHas()).
      texts: db.prepare<[string, number], { title: string; transcript: string }>(
        `SELECT r.title, r.transcript FROM recordings_fts CROSS JOIN recordings AS r ON r.pos = -recordings_fts.rowid WHERE recordings_fts MATCH ? ${limitTo('?')}`,
      ),
      range: db.prepare<[string, string, number], { term: string }>(
        `SELECT term FROM recording_terms WHERE term >= ? AND term < ? ORDER BY term ${limitTo('?')}`,
      ),
    };
  }

  add(term: string): void {
    this.s.add.run(term);
  }

  remove(term: string): void {
    this.s.remove.run(term);
  }

  has(term: string): boolean {
    return this.s.has.get(term) !== undefined;
  }

  /** The seq of a recording the FTS index still holds the word for, or undefined (a quoted FTS5 string, so never syntax). */
  indexedIn(word: string): number | undefined {
    return this.s.indexed.get(ftsQuote(word))?.seq;
  }

  /** Title and transcript of the recording with this seq, if it is live. */
  liveText(seq: number): { title: string; transcript: string } | undefined {
    return this.s.liveText.get(seq);
  }

  /**
   * Whether FTS5 reads the quoted string as at most one token: the index has no positions
   * (detail=none), so a string it splits in two is a phrase, which it refuses.
   */
  oneToken(text: string): boolean {
    try {
      this.s.probe.all(ftsQuote(text));
      return true;
    } catch (e) {
      if (e instanceof Error && /phrase queries are not supported/.test(e.message)) return false;
      throw e;
    }
  }

  /** Title and transcript of up to `limit` live recordings the FTS5 expression returns. */
  texts(match: string, limit: number): Array<{ title: string; transcript: string }> {
    return this.s.texts.all(match, limit);
  }

  /** Up to `limit` terms that start with `prefix`, in order. */
  withPrefix(prefix: string, limit: number): string[] {
    return this.s.range.all(prefix, after(prefix), limit).map((r) => r.term);
  }
}
