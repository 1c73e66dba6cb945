// SQL for devices.
import type { Db } from '../db/open';

export interface DeviceRow {
  account_id: string;
  id: string;
  name: string;
  model: string;
  settings_revision: number;
  created_at: number;
}

export class DeviceStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      insert: db.prepare(
        'INSERT INTO devices (account_id, id, name, model, settings_revision, created_at) VALUES (@account_id, @id, @name, @model, @settings_revision, @created_at)',
      ),
      get: db.prepare<[string, string], DeviceRow>('SELECT * FROM devices WHERE account_id = ? AND id = ?'),
      list: db.prepare<[string], DeviceRow>('SELECT * FROM devices WHERE account_id = ? ORDER BY created_at, id'),
      bumpSettings: db.prepare<[string, string], { settings_revision: number }>(
        'UPDATE devices SET settings_revision = settings_revision + 1 WHERE account_id = ? AND id = ? RETURNING settings_revision',
      ),
    };
  }

  insert(row: DeviceRow): void {
    this.s.insert.run(row);
  }
  get(accountId: string, id: string): DeviceRow | undefined {
    return this.s.get.get(accountId, id);
  }
  list(accountId: string): DeviceRow[] {
    return this.s.list.all(accountId);
  }
  /** Advances the settings ETag; returns the new revision. */
  bumpSettingsRevision(accountId: string, id: string): number {
    return (this.s.bumpSettings.get(accountId, id) as { settings_revision: number }).settings_revision;
  }
}
