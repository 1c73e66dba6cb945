// SQL for the event feed: seq > cursor ORDER BY seq LIMIT n.
import type { Db } from '../db/open';
import { limitTo } from './bound-limit';
import { objectRows } from './object-rows';

export interface EventRow {
  seq: number;
  account_id: string;
  type: string;
  recording_id: string;
  revision: number;
  created_at: number;
}

/** The columns of an EventRow, named for objectRows() (object-rows.ts says why). */
export const EVENT_COLUMNS = 'seq, account_id, type, recording_id, revision, created_at';

export class EventStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<[string, string, string, number, number], EventRow>(
        'INSERT INTO events (account_id, type, recording_id, revision, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
      ),
      // A page is up to 1,000 rows (object-rows.ts says why they are read so).
      page: objectRows(
        db.prepare<[string, number, number], EventRow>(
          `SELECT ${EVENT_COLUMNS} FROM events WHERE account_id = ? AND seq > ? ORDER BY seq ${limitTo('?')}`,
        ),
      ),
      last: db.prepare<[], number | null>('SELECT max(seq) FROM events').pluck(),
      // The event was usually emitted in the very transaction that asks, so walking the account's
      // events newest first (index events_account_seq) reaches it after a few rows.
      transcriptEvent: db.prepare<[string, string, number], { seq: number; created_at: number }>(
        `SELECT seq, created_at FROM events WHERE account_id = ? AND recording_id = ? AND revision = ?
           AND type = 'recording.transcript_ready' ORDER BY seq DESC LIMIT 1`,
      ),
      type: db.prepare<[number], { type: string }>('SELECT type FROM events WHERE seq = ?'),
    };
  }

  insert(accountId: string, type: string, recordingId: string, revision: number, now: number): EventRow {
    return this.s.insert.get(accountId, type, recordingId, revision, now) as EventRow;
  }

  /** The recording.transcript_ready event of a recording's revision, if there is one. */
  transcriptEvent(accountId: string, recordingId: string, revision: number): { seq: number; created_at: number } | undefined {
    return this.s.transcriptEvent.get(accountId, recordingId, revision);
  }

  /** The type of one event, by its seq. */
  type(seq: number): string | undefined {
    return this.s.type.get(seq)?.type;
  }

  /** Up to `limit` events after `afterSeq`, oldest first. */
  page(accountId: string, afterSeq: number, limit: number): EventRow[] {
    return this.s.page.all(accountId, afterSeq, limit);
  }

  /** The newest event id of the server (0 before the first): where a live stream without a start begins. */
  lastSeq(): number {
    return this.s.last.get() ?? 0;
  }
}
