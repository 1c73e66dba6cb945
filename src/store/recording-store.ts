// SQL for single recordings: lookup, insert, save, idempotency keys, sort-key slots and FTS upkeep.
// Listings and search live in recording-search-store.ts. The FTS index follows the table through
// the triggers of schema.sql and flushIndex() before each commit, inside the same transaction.
import type { Db } from '../db/open';
import type { IndexChange } from '../services/index-change';
import { RECORDING_ANSWER_SQL, type RecordingAnswer } from '../services/recording-model';
import { FTS_STRUCTURE_SQL, foldMayMerge, foldOverstepped, nextMergeLevel, structureOf, type FtsStructure } from './fts-structure';
import { RECORDING_COLUMNS, recordingColumns, type RecordingRow } from './recording-row';

/** A recording's GET answer by id and account (RECORDING_ANSWER_SQL). */
const ANSWER_BY_ID_SQL = `SELECT ${RECORDING_ANSWER_SQL} AS body, revision, deleted_at FROM recordings WHERE id = ? AND account_id = ?`;

/** FTS5's usermerge when the table has none set (schema.sql sets 4). */
const FTS5_DEFAULT_USERMERGE = 4;
/** The fold's minimum: any level of two segments (src/store/fts-structure.ts). */
const FOLD_USERMERGE = 2;

/** A row when the credential of this id is live: a key not revoked, a session not ended. */
const LIVE_CREDENTIAL = {
  key: 'SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL',
  session: 'SELECT 1 FROM sessions WHERE id = ? AND ended_at IS NULL',
} as const;

export class RecordingStore {
  /**
   * Indexes the rows noted in this transaction. CROSS JOIN fixes the loop order: the few noted rows
   * outside, one rowid lookup each. Left to the planner, a plain JOIN scanned every live recording
   * (through a partial index) and probed the note table: ~1 s per create at 1M recordings.
   */
  static readonly INDEX_PENDING_SQL = `INSERT INTO recordings_fts (rowid, title, transcript)
    SELECT r.seq, r.title, r.transcript FROM recordings_fts_pending p CROSS JOIN recordings r ON r.pos = -p.seq
    WHERE r.deleted_at IS NULL AND (r.title <> '' OR r.transcript <> '')`;

  /** A bounded slice of segment merging: about N pages ('merge'; never 'optimize', which rewrites the whole index in one transaction). */
  static readonly MERGE_SQL = "INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('merge', ?)";

  private readonly s;
  /** insert() or save() ran since the last flushIndex() (a rolled-back write only costs a look). */
  private wrote = false;

  constructor(private readonly db: Db) {
    this.s = {
      byId: db.prepare<[string, string], RecordingRow>('SELECT * FROM recordings WHERE id = ? AND account_id = ?'),
      answerById: db.prepare<[string, string], RecordingAnswer>(ANSWER_BY_ID_SQL),
      keyLive: db.prepare<[string], 1>(LIVE_CREDENTIAL.key).pluck(),
      sessionLive: db.prepare<[string], 1>(LIVE_CREDENTIAL.session).pluck(),
      answerForKey: db.prepare<[string, string, string], RecordingAnswer>(`${ANSWER_BY_ID_SQL} AND EXISTS (${LIVE_CREDENTIAL.key})`),
      answerForSession: db.prepare<[string, string, string], RecordingAnswer>(`${ANSWER_BY_ID_SQL} AND EXISTS (${LIVE_CREDENTIAL.session})`),
      bySeq: db.prepare<[number], RecordingRow>('SELECT * FROM recordings WHERE pos = -?'),
      byExternal: db.prepare<[string, string], RecordingRow>('SELECT * FROM recordings WHERE integration_id = ? AND external_id = ?'),
      firstUsed: db.prepare<[{ lo: number; hi: number }], { m: number | null }>('SELECT -max(pos) AS m FROM recordings WHERE pos BETWEEN -@hi AND -@lo'),
      // Every column, the key pos being -seq (schema.sql).
      insert: db.prepare<RecordingRow>(
        `INSERT INTO recordings (${recordingColumns()}) VALUES (${RECORDING_COLUMNS.map((c) => (c === 'pos' ? '-@seq' : `@${c}`)).join(', ')})`,
      ),
      // Everything that may change after creation; id, account, type, recorded_at, external_id stay.
      save: db.prepare<RecordingRow>(
        `UPDATE recordings SET title = @title, transcript = @transcript, summary = @summary, updated_at = @updated_at,
           revision = @revision, status = @status, pinned = @pinned, device_id = @device_id, source = @source,
           capture_input = @capture_input, native = @native, text_saved = @text_saved, processing_updated_at = @processing_updated_at,
           processing_message = @processing_message, audio = @audio, body_hash = @body_hash, deleted_at = @deleted_at
         WHERE pos = -@seq`,
      ),
      keyGet: db.prepare<[string, string], { recording_seq: number }>(
        'SELECT -recording_pos AS recording_seq FROM recording_keys WHERE integration_id = ? AND key = ?',
      ),
      keyInsert: db.prepare<[string, string, number, number]>(
        'INSERT INTO recording_keys (integration_id, key, recording_pos, created_at) VALUES (?, ?, -?, ?)',
      ),
      isNoted: db.prepare<[number]>('SELECT 1 FROM recordings_fts_pending WHERE seq = ?').pluck(),
      note: db.prepare<[number]>('INSERT OR IGNORE INTO recordings_fts_pending (seq) VALUES (?)'),
      unnote: db.prepare<[number]>('DELETE FROM recordings_fts_pending WHERE seq = ?'),
      ftsDelete: db.prepare<[number, string, string]>("INSERT INTO recordings_fts (recordings_fts, rowid, title, transcript) VALUES ('delete', ?, ?, ?)"),
      ftsInsert: db.prepare<[number, string, string]>('INSERT INTO recordings_fts (rowid, title, transcript) VALUES (?, ?, ?)'),
      merge: db.prepare<[number]>(RecordingStore.MERGE_SQL),
      structure: db.prepare<[], Buffer>(FTS_STRUCTURE_SQL).pluck(),
      usermerge: db.prepare<[], number>("SELECT v FROM recordings_fts_config WHERE k = 'usermerge'").pluck(),
      // A bigint: FTS5 takes only an INTEGER there, and better-sqlite3 binds a number as REAL.
      setUsermerge: db.prepare<[bigint]>("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('usermerge', ?)"),
      foldBegin: db.prepare('SAVEPOINT fold'),
      foldUndo: db.prepare('ROLLBACK TO fold'),
      foldEnd: db.prepare('RELEASE fold'),
      totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
      anyPending: db.prepare('SELECT 1 FROM recordings_fts_pending LIMIT 1').pluck(),
      indexPending: db.prepare(RecordingStore.INDEX_PENDING_SQL),
      clearPending: db.prepare('DELETE FROM recordings_fts_pending'),
      pendingTexts: db.prepare<[], { title: string; transcript: string }>(
        'SELECT r.title, r.transcript FROM recordings_fts_pending p CROSS JOIN recordings r ON r.pos = -p.seq WHERE r.deleted_at IS NULL',
      ),
    };
  }

  get(accountId: string, id: string): RecordingRow | undefined {
    return this.s.byId.get(id, accountId);
  }
  /** get() as its v2 answer text (RECORDING_ANSWER_SQL). */
  answer(accountId: string, id: string): RecordingAnswer | undefined {
    return this.s.answerById.get(id, accountId);
  }

  /**
   * answer(), found only while the credential is live (a key not revoked, a session not ended),
   * read in the same snapshot as the recording: undefined when either is missing.
   */
  answerWhileLive(accountId: string, id: string, credential: { kind: 'key' | 'session'; id: string }): RecordingAnswer | undefined {
    return (credential.kind === 'key' ? this.s.answerForKey : this.s.answerForSession).get(id, accountId, credential.id);
  }

  /** Whether a credential is live: a key not revoked, a session not ended. */
  credentialLive(credential: { kind: 'key' | 'session'; id: string }): boolean {
    return (credential.kind === 'key' ? this.s.keyLive : this.s.sessionLive).get(credential.id) !== undefined;
  }

  bySeq(seq: number): RecordingRow | undefined {
    return this.s.bySeq.get(seq);
  }
  byExternalId(integrationId: string, externalId: string): RecordingRow | undefined {
    return this.s.byExternal.get(integrationId, externalId);
  }
  /** The lowest sort key already used in [from, to], or null. */
  firstUsed(from: number, to: number): number | null {
    return this.s.firstUsed.get({ lo: from, hi: to })?.m ?? null;
  }
  insert(row: RecordingRow): void {
    this.s.insert.run(row);
    this.wrote = true;
  }
  save(row: RecordingRow): void {
    this.s.save.run(row);
    this.wrote = true;
  }
  /**
   * save() of an edit that only needs `change` in the index (services/index-change.ts), for a row
   * the index holds now (isIndexed) whose new text has some. The row is noted for the UPDATE, so the
   * trigger of schema.sql leaves the index alone (it takes a noted row for one not indexed yet), and
   * unnoted after it, so that flushIndex() does not index the whole text; then the index gets the
   * delete and the insert of the words that changed, in this transaction.
   */
  saveEdited(row: RecordingRow, change: IndexChange): void {
    this.s.note.run(row.seq);
    this.s.save.run(row);
    this.s.unnote.run(row.seq);
    this.s.ftsDelete.run(row.seq, change.remove.title, change.remove.transcript);
    this.s.ftsInsert.run(row.seq, change.add.title, change.add.transcript);
    this.wrote = true;
  }
  /** Whether the index holds the row's text as it is: live, with text, and not noted for indexing at commit. */
  isIndexed(row: RecordingRow): boolean {
    return row.deleted_at === null && (row.title !== '' || row.transcript !== '') && this.s.isNoted.get(row.seq) === undefined;
  }
  keyTarget(integrationId: string, key: string): number | undefined {
    return this.s.keyGet.get(integrationId, key)?.recording_seq;
  }
  insertKey(integrationId: string, key: string, seq: number, now: number): void {
    this.s.keyInsert.run(integrationId, key, seq, now);
  }
  /**
   * Indexes the rows the triggers noted in this transaction, in one statement (so FTS5 writes one
   * segment for all of them), and empties the note table. Runs before every commit (Writer.beforeCommit).
   */
  flushIndex(): void {
    // Only this store's insert() and save() fire the noting triggers: a transaction that wrote no
    // recording (a key touch, a delivery claim) skips even the look at the note table.
    if (!this.wrote) return;
    this.wrote = false;
    this.indexNoted();
  }
  /** Indexes whatever is noted, whoever noted it (also rows another writer left committed). */
  indexNoted(): void {
    if (!this.hasPending()) return;
    this.s.indexPending.run();
    this.s.clearPending.run();
  }
  /** Title and transcript of the live rows noted for indexing. */
  pendingTexts(): Array<{ title: string; transcript: string }> {
    return this.s.pendingTexts.all();
  }
  /** Whether rows are noted for indexing (between commits: only if a writer without flushIndex left them). */
  hasPending(): boolean {
    return this.s.anyPending.get() !== undefined;
  }
  /**
   * One slice of the idle merger (src/services/index-merger.ts), inside a write transaction: up to
   * about `pages` pages of FTS5's 'merge', which goes on with a merge in progress first, then
   * merges any level of usermerge (4) segments, and here also folds the small levels together
   * (src/store/fts-structure.ts says why and which). Whether FTS5 did any work.
   *
   * FTS5 has no per-call minimum, so the slice that begins a fold's merge sets usermerge to 2 for
   * its one statement, in a savepoint, with a budget of 1 page. One statement goes on while pages
   * are left: it may finish a merge and begin the next, which may be one the fold must not (the
   * level it just filled is the one below the largest segment's); with 1 page it stops once its
   * merge has written a leaf. Later slices go on with that merge as FTS5's ordinary 'merge' does
   * (with usermerge 4, what it begins after is FTS5's usual rule). The structure record is checked
   * after the statement anyway, and a slice that went further is rolled back and run as an ordinary
   * one. A structure record the decoder does not read leaves the slice an ordinary one too.
   */
  mergeSlice(pages: number): boolean {
    let before: FtsStructure;
    try {
      before = this.structure();
    } catch {
      return this.ftsMerge(pages);
    }
    const usermerge = this.s.usermerge.get() ?? FTS5_DEFAULT_USERMERGE;
    const next = nextMergeLevel(before, FOLD_USERMERGE);
    const level = before.levels[next];
    // A merge in progress, or a level of usermerge segments: FTS5's own rule does it.
    if (level && level.merging === 0 && level.segments.length < usermerge && foldMayMerge(before, next, level.segments.length, usermerge)) {
      const worked = this.beginFold(before, usermerge);
      if (worked !== undefined) return worked;
    }
    return this.ftsMerge(pages);
  }

  /** The first page of a fold's merge (see mergeSlice): whether it did work, or undefined when it went further than the fold may (undone). */
  private beginFold(before: FtsStructure, usermerge: number): boolean | undefined {
    this.s.foldBegin.run();
    let worked: boolean;
    let kept: boolean;
    try {
      this.s.setUsermerge.run(BigInt(FOLD_USERMERGE));
      worked = this.ftsMerge(1);
      this.s.setUsermerge.run(BigInt(usermerge));
      kept = !foldOverstepped(before, this.structure(), usermerge);
    } catch (error) {
      // An error that ended the whole transaction (SQLITE_FULL, say) took the savepoint with it:
      // the caller is told of that error, not of a savepoint no longer there.
      if (this.db.inTransaction) {
        try {
          this.s.foldUndo.run();
          this.s.foldEnd.run();
        } catch {
          // the error above is the one to report
        }
      }
      throw error;
    }
    if (!kept) this.s.foldUndo.run();
    this.s.foldEnd.run();
    return kept ? worked : undefined;
  }

  /** The index's segments (src/store/fts-structure.ts). */
  structure(): FtsStructure {
    return structureOf(this.s.structure.get());
  }

  /**
   * Up to `pages` pages of FTS5's ordinary 'merge' (a merge in progress, or levels of usermerge
   * segments: the idle merger's rule before the fold, which the bench and tests compare with);
   * whether FTS5 did any work. The 'merge' statement itself counts one change in
   * sqlite3_total_changes(); a merge that did work also wrote segment pages and the structure
   * record, so two or more means work was done (tested against a settled and an empty index).
   */
  ftsMerge(pages: number): boolean {
    const before = this.s.totalChanges.get()!;
    this.s.merge.run(pages);
    return this.s.totalChanges.get()! - before >= 2;
  }
  /**
   * Up to `pages` pages of compaction: FTS5's 'merge' with a negative argument moves every segment
   * to one new top level and merges them there, a slice at a time (an 'optimize' in steps). Whether
   * it did work: none once the index is one segment.
   */
  compactSlice(pages: number): boolean {
    return this.ftsMerge(-pages);
  }

  /**
   * The next slice of a compaction begun with compactSlice(): an ordinary 'merge', which goes on
   * with the merge in progress. Not compactSlice() again: FTS5 plans a negative merge afresh each
   * time, moving every segment to one more new level, and a compaction resumed after writes
   * (at a million recordings it spans many quiet spells) took the index to FTS5's cap of 64
   * levels, whose merge work every write then pays (the slowest create 4.3 → 21 ms at 15,000).
   */
  continueCompaction(pages: number): boolean {
    return this.ftsMerge(pages);
  }
}
