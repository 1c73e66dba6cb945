// The tokens FTS5 makes of texts, from FTS5 itself: a scratch FTS5 table in the connection's temp
// schema (in memory: temp_store = MEMORY; contentless, so only its index is written) with the
// search index's own tokenizer, read from the index's definition, and an fts5vocab 'instance'
// table over it that lists every token with its document and column. Used where an exact word
// list matters and JavaScript cannot be sure of FTS5's case folding and diacritics tables
// (services/index-change.ts, for texts outside ASCII).
import type { Db } from '../db/open';

/** The tokens of one text pair, column by column, in order. */
export interface Tokenized {
  title: string[];
  transcript: string[];
}

const SCRATCH = 'reclib_tokenizer';

export class TokenizerStore {
  private s: ReturnType<TokenizerStore['prepare']> | null | undefined;

  constructor(private readonly db: Db) {}

  /**
   * The tokens of each pair, or null when the index's tokenizer cannot be read from its definition.
   * Leaves the scratch table empty.
   */
  tokenize(pairs: Array<{ title: string; transcript: string }>): Tokenized[] | null {
    const s = this.statements();
    if (!s) return null;
    const out: Tokenized[] = pairs.map(() => ({ title: [], transcript: [] }));
    pairs.forEach((p, i) => s.insert.run(i + 1, p.title, p.transcript));
    try {
      for (const r of s.instances.iterate()) out[r.doc - 1]![r.col].push(r.term);
    } finally {
      s.clear.run();
    }
    return out;
  }

  private statements() {
    if (this.s !== undefined) return this.s;
    const row = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'recordings_fts'").get() as { sql: string } | undefined;
    const tokenize = row?.sql.match(/tokenize\s*=\s*'([^']*)'/i)?.[1];
    if (tokenize === undefined) return (this.s = null);
    this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.${SCRATCH} USING fts5(title, transcript, content = '', tokenize = '${tokenize.replaceAll("'", "''")}');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.${SCRATCH}_instances USING fts5vocab(temp, ${SCRATCH}, 'instance');`);
    return (this.s = this.prepare());
  }

  private prepare() {
    return {
      insert: this.db.prepare<[number, string, string]>(`INSERT INTO temp.${SCRATCH} (rowid, title, transcript) VALUES (?, ?, ?)`),
      instances: this.db.prepare<[], { doc: number; col: 'title' | 'transcript'; term: string }>(`SELECT doc, col, term FROM temp.${SCRATCH}_instances`),
      clear: this.db.prepare(`INSERT INTO temp.${SCRATCH} (${SCRATCH}) VALUES ('delete-all')`),
    };
  }
}
