// The tokens FTS5 makes of texts, from FTS5 itself: a scratch FTS5 table in the connection's temp
// schema (in memory: temp_store = MEMORY; contentless, so only its index is written) with the
// search index's own tokenizer, read from the index's definition, and an fts5vocab 'instance'
// table over it that lists every token with its document and column. Used where an exact word
// list matters and JavaScript cannot be sure of FTS5's case folding and diacritics tables
// (services/index-change.ts, for texts outside ASCII).
import type { Db } from '../db/open';
import type { IndexedText } from '../services/index-change';

const SCRATCH = 'reclib_tokenizer';

export class TokenizerStore {
  /** The index's tokenizer (null: not found in its definition), read once. */
  private spec: string | null | undefined;
  private s: ReturnType<TokenizerStore['prepare']> | undefined;
  private readonly exists;

  constructor(private readonly db: Db) {
    this.exists = db.prepare(`SELECT 1 FROM temp.sqlite_master WHERE name = '${SCRATCH}_instances'`).pluck();
  }

  /**
   * The tokens of each pair, or null when the index's tokenizer cannot be read from its definition.
   * Leaves the scratch table empty.
   */
  tokenize(pairs: Array<{ title: string; transcript: string }>): IndexedText[] | null {
    if (this.spec === undefined) {
      const row = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'recordings_fts'").get() as { sql: string } | undefined;
      this.spec = row?.sql.match(/tokenize\s*=\s*'([^']*)'/i)?.[1] ?? null;
    }
    if (this.spec === null) return null;
    // The tables are made inside the caller's transaction: if that rolled back, so did they.
    if (this.exists.get() === undefined) {
      this.db.exec(`CREATE VIRTUAL TABLE temp.${SCRATCH} USING fts5(title, transcript, content = '', tokenize = '${this.spec.replaceAll("'", "''")}');
        CREATE VIRTUAL TABLE temp.${SCRATCH}_instances USING fts5vocab(temp, ${SCRATCH}, 'instance');`);
    }
    const s = (this.s ??= this.prepare());
    const out: IndexedText[] = pairs.map(() => ({ title: [], transcript: [] }));
    pairs.forEach((p, i) => s.insert.run(i + 1, p.title, p.transcript));
    try {
      for (const r of s.instances.iterate()) out[r.doc - 1]![r.col].push(r.term);
    } finally {
      s.clear.run();
    }
    return out;
  }

  private prepare() {
    return {
      insert: this.db.prepare<[number, string, string]>(`INSERT INTO temp.${SCRATCH} (rowid, title, transcript) VALUES (?, ?, ?)`),
      instances: this.db.prepare<[], { doc: number; col: 'title' | 'transcript'; term: string }>(`SELECT doc, col, term FROM temp.${SCRATCH}_instances`),
      clear: this.db.prepare(`INSERT INTO temp.${SCRATCH} (${SCRATCH}) VALUES ('delete-all')`),
    };
  }
}
