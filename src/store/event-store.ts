// SQL for the event feed: seq > cursor ORDER BY seq LIMIT n.
import type { Db } from '../db/open';

export interface EventRow {
  seq: number;
  account_id: string;
  type: string;
  recording_id: string;
  revision: number;
  created_at: number;
}

export class EventStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<[string, string, string, number, number], EventRow>(
        'INSERT INTO events (account_id, type, recording_id, revision, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
      ),
      page: db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      last: db.prepare<[], number | null>('SELECT max(seq) FROM events').pluck(),
    };
  }

  insert(accountId: string, type: string, recordingId: string, revision: number, now: number): EventRow {
    return this.s.insert.get(accountId, type, recordingId, revision, now) as EventRow;
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
