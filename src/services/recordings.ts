// RecordingService: the one writer of recordings. Every create, edit, report and delete runs here in
// one Writer transaction together with its events (and, through the event listeners, the webhook
// outbox rows), the FTS index (schema triggers) and the change hooks, so nothing is announced that
// was not saved and nothing saved goes unannounced. Methods take plain inputs, not HTTP types: the
// v2 routes and the v1 compatibility layer call the same code.
//
// Events per write (docs/decisions.md §17; all carry the revision after the write):
//   create with text ............................ recording.created (+ recording.transcript_ready
//                                                  when the transcript is nonempty)
//   create of a metadata-only pending capture ... none (a native capture without a transcript)
//   first save of such a capture by its app ..... recording.created (+ transcript_ready if nonempty)
//   edit that changes something ................. recording.updated (+ transcript_ready when the
//                                                  transcript changed to a nonempty text)
//   edit that changes nothing ................... none, and the revision stays
//   processing or audio report that changes ..... recording.updated (a report repeating what is
//                                                  stored: none, and the revision stays)
//   delete ...................................... recording.deleted (revision + 1)
// A capture that was never announced (not yet saved) emits nothing for later writes either.
import type { Core } from '../context';
import { AppError, invalid, notFound } from '../errors';
import type { Principal } from '../permissions';
import { RecordingSearchStore } from '../store/recording-search-store';
import { RecordingStore } from '../store/recording-store';
import { captureType, checkEchoedFields, type EchoedFields, type InputMappings } from './capture-metadata';
import type { EventService } from './events';
import { IndexMerger } from './index-merger';
import { indexChange } from './index-change';
import { newRow, replay } from './recording-create';
import { checkCreateInput, checkPatch, immutableFieldIn, type CreateInput, type RecordingPatch } from './recording-input';
import { bodyHash, checkRevision, type RecordingAnswer, type RecordingRow } from './recording-model';
import { RecordingReports, type AudioReport, type ProcessingReport } from './recording-reports';
import { listPage, SEARCH_BUDGET, type ListInput, type SearchBudget } from './recording-search';
import { SearchCursors } from './search-cursor';

import { SearchTerms } from './search-terms';

/** A page whose rows after `rows` are read by `load` as they are written. */
export interface LazyPage {
  rows: RecordingRow[];
  later: number[];
  load(seq: number): RecordingRow | undefined;
  nextCursor: string | null;
}

/**
 * Called inside the writing transaction with the row before (null on create) and after. That
 * transaction may be rolled back and run again (a grouped write, db/writer.ts): a listener's
 * effects outside the database go through writer.onCommit.
 */
export type ChangeListener = (before: RecordingRow | null, after: RecordingRow) => void;

export interface EditOptions {
  /** Fixed fields sent back as read (v1 PUT): each must equal the stored value, else 409 immutable_field. */
  echoed?: EchoedFields | undefined;
}

export interface CreateResult {
  row: RecordingRow;
  /** An earlier create of this key (or externalId) answered again. */
  replayed: boolean;
}

export const MAX_IDEMPOTENCY_KEY = 255;

/** A looked-up recording that is there and not deleted: else 404, or 410 for a tombstone. */
function live<T extends { deleted_at: number | null }>(found: T | undefined, id: string): T {
  if (!found) throw notFound('recording');
  if (found.deleted_at !== null) throw new AppError('gone', `recording ${id} was deleted`);
  return found;
}

export class RecordingService {
  readonly store: RecordingStore;
  readonly searchStore: RecordingSearchStore;
  /** Seals and opens listing cursors (search-cursor.ts). */
  private readonly cursors: SearchCursors;
  /** How much one search page may read (recording-search.ts); tests set a small, clock-free one. */
  searchBudget: SearchBudget = SEARCH_BUDGET;
  readonly terms: SearchTerms;
  private readonly listeners: ChangeListener[] = [];
  private readonly reports: RecordingReports;
  /** Merges index segments while the server is idle (a worker started by `serve`). */
  readonly merger: IndexMerger;
  private readonly indexPending = () => this.store.flushIndex();
  /**
   * For forget(): indexes what is noted so far without clearing the store's "wrote" mark, so the
   * pre-commit flush still looks: a grouped member that fails after this is rolled back (to its
   * savepoint, or with the whole group, which then runs again), which can note again a row an
   * earlier member wrote.
   */
  private readonly indexNotedSoFar = () => this.store.indexNoted();

  constructor(
    private readonly core: Core,
    private readonly events: EventService,
    /** The device input mappings: they decide an app capture's type and check its metadata. */
    private readonly mappings: InputMappings,
  ) {
    this.store = new RecordingStore(core.db);
    this.searchStore = new RecordingSearchStore(core.db);
    this.cursors = new SearchCursors(core.masterSecret);
    // New and edited text reaches the FTS index once per transaction (see schema.sql).
    core.writer.beforeCommit(this.indexPending);
    this.terms = new SearchTerms(core);
    this.merger = new IndexMerger(core, this.store);
    // Rows a writer without that hook committed (an older reclib still running on this file, a
    // sqlite3 shell) are indexed now, with their words, rather than staying unsearchable.
    if (this.store.hasPending()) {
      core.writer.write(() => {
        for (const r of this.store.pendingTexts()) this.terms.note(r.title, r.transcript);
        this.store.indexNoted();
      });
    }
    this.reports = new RecordingReports(core, {
      get: (principal, id) => this.get(principal, id),
      saveChange: (before, after, now) => this.saveReported(before, after, now),
    }, mappings);
  }

  /** Registers a hook run inside every recording write (e.g. the capture-rule engine). */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Creates a recording, or replays the one this key (or this externalId) created before.
   * Keys and external ids belong to the caller's integration identity.
   */
  create(principal: Principal, input: CreateInput, idempotencyKey: string): CreateResult {
    return this.core.writer.write(this.creation(principal, input, idempotencyKey));
  }

  /**
   * create(), committed in one transaction with other requests' writes (Writer.writeGrouped).
   * `unchecked`: the principal came from the credential cache without the question whether
   * another connection (the CLI) revoked it since (AuthService.cached): the transaction checks
   * that the credential is live, exactly, and refuses (401) when it is not.
   */
  async createGrouped(principal: Principal, input: CreateInput, idempotencyKey: string, unchecked = false): Promise<CreateResult> {
    return this.core.writer.writeGrouped(this.creation(principal, input, idempotencyKey, unchecked));
  }

  /** Checks the input now; returns the transaction that creates or replays. */
  private creation(principal: Principal, input: CreateInput, idempotencyKey: string, unchecked = false): () => CreateResult {
    if (idempotencyKey.length < 1 || idempotencyKey.length > MAX_IDEMPOTENCY_KEY) {
      throw invalid(`Idempotency-Key: must be 1-${MAX_IDEMPOTENCY_KEY} characters`);
    }
    checkCreateInput(input);
    const hash = bodyHash(input);
    return () => {
      if (unchecked && !this.store.credentialLive({ kind: principal.kind, id: principal.credentialId })) {
        throw new AppError('unauthenticated', principal.kind === 'key' ? 'API key has been revoked' : 'session is not valid');
      }
      const now = this.core.writer.now;
      const keyed = this.store.keyTarget(principal.integrationId, idempotencyKey);
      if (keyed !== undefined) return { row: replay(this.store.bySeq(keyed)!, hash, 'Idempotency-Key'), replayed: true };
      if (input.externalId !== undefined) {
        const existing = this.store.byExternalId(principal.integrationId, input.externalId);
        if (existing) {
          const row = replay(existing, hash, 'externalId');
          this.store.insertKey(principal.integrationId, idempotencyKey, row.seq, now);
          return { row, replayed: true };
        }
      }
      // The type is decided only when a row is created, never on a replay, so a retry after a
      // settings change still replays; the body hash stays that of the input as sent.
      const row = newRow(this.store, principal, { ...input, type: captureType(this.mappings, principal, input) }, hash, now);
      this.store.insert(row);
      this.store.insertKey(principal.integrationId, idempotencyKey, row.seq, now);
      this.indexed(row.title, row.transcript);
      if (row.text_saved === 1) this.announceText(row, 'recording.created', true, now);
      for (const l of this.listeners) l(null, row);
      return { row, replayed: false };
    };
  }

  /** The live recording; 404 when it is not the caller's account's, 410 when deleted. */
  get(principal: Pick<Principal, 'accountId'>, id: string): RecordingRow {
    return live(this.store.get(principal.accountId, id), id);
  }

  /** get() as its v2 answer: the `{"recording":…}` JSON text, written by SQLite (RECORDING_ANSWER_SQL). */
  answer(principal: Pick<Principal, 'accountId'>, id: string): RecordingAnswer {
    return live(this.store.answer(principal.accountId, id), id);
  }

  /**
   * answer() of a live recording for a principal taken from the credential cache unchecked
   * (AuthService.cached): found only while its credential is live, read in the same snapshot.
   * Undefined for every other outcome (no such recording, deleted, credential revoked or ended),
   * which the caller then answers through authenticate() and answer().
   */
  answerWhileLive(principal: Pick<Principal, 'accountId' | 'kind' | 'credentialId'>, id: string): RecordingAnswer | undefined {
    const found = this.store.answerWhileLive(principal.accountId, id, { kind: principal.kind, id: principal.credentialId });
    return found?.deleted_at === null ? found : undefined;
  }

  /** Edits title, transcript, summary and pinned. A patch that changes nothing keeps the revision. */
  update(principal: Principal, id: string, patch: RecordingPatch, expectedRevision: number, options: EditOptions = {}): RecordingRow {
    return this.core.writer.write(this.edit(principal, id, patch, expectedRevision, options));
  }

  /** update(), committed in one transaction with other requests' writes (Writer.writeGrouped). */
  async updateGrouped(principal: Principal, id: string, patch: RecordingPatch, expectedRevision: number, options: EditOptions = {}): Promise<RecordingRow> {
    return this.core.writer.writeGrouped(this.edit(principal, id, patch, expectedRevision, options));
  }

  private edit(principal: Principal, id: string, patch: RecordingPatch, expectedRevision: number, options: EditOptions): () => RecordingRow {
    checkPatch(patch);
    return () => {
      const before = this.get(principal, id);
      // Compared with the row this transaction writes, so a change committed in between counts.
      if (options.echoed) checkEchoedFields(before, options.echoed);
      this.checkEditable(principal, before);
      const fixed = immutableFieldIn(patch);
      if (fixed) throw new AppError('immutable_field', `${fixed}: cannot be changed after creation; editable are title, transcript, summary, pinned`);
      checkRevision(before, expectedRevision);
      const after: RecordingRow = { ...before };
      if (patch.title !== undefined) after.title = patch.title;
      if (patch.transcript !== undefined) after.transcript = patch.transcript;
      if (patch.summary !== undefined) after.summary = patch.summary;
      if (patch.pinned !== undefined) after.pinned = patch.pinned ? 1 : 0;
      // Saving a nonempty transcript makes the recording ready (docs/decisions.md §13).
      if (patch.transcript !== undefined && patch.transcript !== '') after.status = 'ready';
      // The app's first save of its pending capture is what announces it.
      const firstSave = before.text_saved === 0 && patch.transcript !== undefined;
      if (firstSave) after.text_saved = 1;
      const changed =
        firstSave ||
        after.title !== before.title ||
        after.transcript !== before.transcript ||
        after.summary !== before.summary ||
        after.pinned !== before.pinned ||
        after.status !== before.status;
      if (!changed) return before;
      const now = this.core.writer.now;
      after.revision = before.revision + 1;
      after.updated_at = now;
      // The status moved (a saved transcript made it ready): v1's processing state changed now, and
      // a message the client reported with the earlier status no longer describes it.
      if (after.status !== before.status) {
        after.processing_updated_at = now;
        after.processing_message = null;
      }
      const textChanged = after.title !== before.title || after.transcript !== before.transcript;
      if (textChanged) this.saveText(before, after);
      else this.store.save(after);
      if (textChanged) {
        this.indexed(after.title, after.transcript);
        // forget() asks the FTS index whether any text still has a word: what this transaction
        // noted so far is indexed first, or a recording created earlier in it would not count.
        this.terms.forget([before.title, before.transcript], [after.title, after.transcript], this.indexNotedSoFar);
      }
      if (firstSave) this.announceText(after, 'recording.created', true, now);
      else if (before.text_saved === 1) this.announceText(after, 'recording.updated', after.transcript !== before.transcript, now);
      for (const l of this.listeners) l(before, after);
      return after;
    };
  }

  /** Deletes: the row stays as a tombstone without text or audio, so later access answers 410. */
  remove(principal: Principal, id: string, expectedRevision: number): RecordingRow {
    return this.core.writer.write(this.deletion(principal, id, expectedRevision));
  }

  /** remove(), committed in one transaction with other requests' writes (Writer.writeGrouped). */
  async removeGrouped(principal: Principal, id: string, expectedRevision: number): Promise<RecordingRow> {
    return this.core.writer.writeGrouped(this.deletion(principal, id, expectedRevision));
  }

  private deletion(principal: Principal, id: string, expectedRevision: number): () => RecordingRow {
    return () => {
      const before = this.get(principal, id);
      checkRevision(before, expectedRevision);
      const now = this.core.writer.now;
      const after: RecordingRow = {
        ...before,
        title: '',
        transcript: '',
        summary: '',
        audio: '[]',
        processing_message: null,
        body_hash: '',
        deleted_at: now,
        updated_at: now,
        revision: before.revision + 1,
      };
      this.store.save(after);
      this.terms.forget([before.title, before.transcript], [], this.indexNotedSoFar); // as in an edit
      if (before.text_saved === 1) this.events.emit(after.account_id, 'recording.deleted', after.id, after.revision, now);
      for (const l of this.listeners) l(before, after);
      return after;
    };
  }

  /** One page of the account's live recordings, newest first, read whole (see recording-search.ts). */
  list(principal: Pick<Principal, 'accountId'>, input: ListInput): { rows: RecordingRow[]; nextCursor: string | null } {
    const page = this.listLazily(principal, input);
    const rows = [...page.rows];
    for (const seq of page.later) {
      const row = page.load(seq);
      if (row) rows.push(row);
    }
    return { rows, nextCursor: page.nextCursor };
  }

  /**
   * The same page with a large page's rows left to read one at a time (`later`, `load`: undefined
   * for a row deleted meanwhile), for answers that write them one by one (http/page-answer.ts).
   */
  listLazily(principal: Pick<Principal, 'accountId'>, input: ListInput): LazyPage {
    const page = listPage(this.searchStore, this.terms, this.cursors, principal.accountId, input, this.searchBudget);
    return { rows: page.rows, later: page.later ?? [], load: (seq) => this.searchStore.row(principal.accountId, seq), nextCursor: page.nextCursor };
  }

  /** v1 processing report of the importing application (recording-reports.ts). */
  reportProcessing(principal: Principal, id: string, report: ProcessingReport, expectedRevision?: number): RecordingRow {
    return this.reports.processing(principal, id, report, expectedRevision);
  }

  /** v1 audio report: adds (available) or removes one local-file reference of a memo (recording-reports.ts). */
  reportAudio(principal: Principal, id: string, ref: AudioReport, expectedRevision?: number): RecordingRow {
    return this.reports.audio(principal, id, ref, expectedRevision);
  }

  /** A report's change: stored with its recording.updated event (once announced) and the change hooks. */
  private saveReported(before: RecordingRow, after: RecordingRow, now: number): void {
    this.store.save(after);
    if (before.text_saved === 1) this.events.emit(after.account_id, 'recording.updated', after.id, after.revision, now);
    for (const l of this.listeners) l(before, after);
  }

  private checkEditable(principal: Principal, row: RecordingRow): void {
    if (row.text_saved === 0 && row.integration_id !== principal.integrationId) {
      throw new AppError('not_editable', 'this capture is still pending: it can be edited once the app has saved its text');
    }
  }

  private announceText(row: RecordingRow, type: 'recording.created' | 'recording.updated', transcriptChanged: boolean, now: number): void {
    this.events.emit(row.account_id, type, row.id, row.revision, now);
    if (transcriptChanged && row.transcript !== '') this.events.emit(row.account_id, 'recording.transcript_ready', row.id, row.revision, now);
  }

  /**
   * Saves an edit of the title or transcript. When the index holds the old text and both texts'
   * tokens are known exactly, only the words that changed are deleted from and added to it
   * (services/index-change.ts); otherwise the trigger of schema.sql deletes the whole old text and
   * the new one is indexed at commit.
   */
  private saveText(before: RecordingRow, after: RecordingRow): void {
    const words = (after.title !== '' || after.transcript !== '') && this.store.isIndexed(before) ? this.terms.indexedWords([before, after]) : null;
    const change = words && indexChange(words[0]!, words[1]!);
    if (change) this.store.saveEdited(after, change);
    else this.store.save(after);
  }

  /** Keeps the search vocabulary, and tells the merger that index segments may want merging. */
  private indexed(title: string, transcript: string): void {
    if (title === '' && transcript === '') return;
    this.terms.note(title, transcript);
    this.merger.noteWrite();
  }
}
