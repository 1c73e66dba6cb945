// SQL for `reclib export`: an account's live recordings a page at a time (memory stays flat at
// 1M recordings, and no read snapshot is held for the whole export), and single lookups to tell
// whether an exported file's recording is still live.
import type { Db } from '../db/open';
import { recordingColumns, type RecordingRow } from './recording-row';
import { limitTo } from './bound-limit';
import { objectRows } from './object-rows';

export class RecordingExportStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      // recordings_account (account_id) WHERE deleted_at IS NULL ends in pos = -seq: each page is an
      // index range, of 500 rows read through objectRows() (object-rows.ts says why).
      page: objectRows(
        db.prepare<[string, number, number], RecordingRow>(
          `SELECT ${recordingColumns()} FROM recordings WHERE account_id = ? AND deleted_at IS NULL AND pos < -? ORDER BY pos DESC ${limitTo('?')}`,
        ),
      ),
      count: db.prepare<[string], number>('SELECT count(*) FROM recordings WHERE account_id = ? AND deleted_at IS NULL').pluck(),
      live: db.prepare<[string, string], RecordingRow>('SELECT * FROM recordings WHERE id = ? AND account_id = ? AND deleted_at IS NULL'),
    };
  }

  count(accountId: string): number {
    return this.s.count.get(accountId) ?? 0;
  }

  /** The account's live recordings in sort-key order (newest first), `pageSize` rows per query. */
  *live(accountId: string, pageSize = 500): Generator<RecordingRow> {
    let after = -1;
    for (;;) {
      const rows = this.s.page.all(accountId, after, pageSize);
      yield* rows;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.seq;
    }
  }

  /** The recording if it is live in this account. */
  liveById(accountId: string, id: string): RecordingRow | undefined {
    return this.s.live.get(id, accountId);
  }
}
