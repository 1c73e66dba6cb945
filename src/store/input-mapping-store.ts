// SQL for input-mapping revisions: immutable rows, ordered by created_at then insertion (seq).
import type { Db } from '../db/open';

export interface InputMappingRow {
  seq: number;
  account_id: string;
  id: string;
  device_id: string;
  /** JSON object input → clip|memo, the complete mapping of the device. */
  inputs: string;
  created_at: number;
}

export class InputMappingStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare<[string, string, string, string, number], InputMappingRow>(
        'INSERT INTO input_mappings (account_id, id, device_id, inputs, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *',
      ),
      byId: db.prepare<[string, string], InputMappingRow>('SELECT * FROM input_mappings WHERE account_id = ? AND id = ?'),
      // A new row gets the highest seq, so every row with created_at <= t precedes it.
      latestUpTo: db.prepare<[string, string, number], InputMappingRow>(
        `SELECT * FROM input_mappings WHERE account_id = ? AND device_id = ? AND created_at <= ?
         ORDER BY created_at DESC, seq DESC LIMIT 1`,
      ),
      list: db.prepare<[string], InputMappingRow>('SELECT * FROM input_mappings WHERE account_id = ? ORDER BY created_at, seq'),
      listDevice: db.prepare<[string, string], InputMappingRow>(
        'SELECT * FROM input_mappings WHERE account_id = ? AND device_id = ? ORDER BY created_at, seq',
      ),
    };
  }

  insert(accountId: string, id: string, deviceId: string, inputs: string, createdAt: number): InputMappingRow {
    return this.s.insert.get(accountId, id, deviceId, inputs, createdAt) as InputMappingRow;
  }
  byId(accountId: string, id: string): InputMappingRow | undefined {
    return this.s.byId.get(accountId, id);
  }
  /** The newest revision of a device (the current settings), or undefined while on defaults. */
  latest(accountId: string, deviceId: string): InputMappingRow | undefined {
    return this.s.latestUpTo.get(accountId, deviceId, Number.MAX_SAFE_INTEGER);
  }
  /** The revision a new one created at `createdAt` follows. */
  latestUpTo(accountId: string, deviceId: string, createdAt: number): InputMappingRow | undefined {
    return this.s.latestUpTo.get(accountId, deviceId, createdAt);
  }
  list(accountId: string, deviceId?: string): InputMappingRow[] {
    return deviceId === undefined ? this.s.list.all(accountId) : this.s.listDevice.all(accountId, deviceId);
  }
}
