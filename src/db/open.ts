// Opening the one SQLite file. The server and the admin CLI both come through here, so they use
// the same pragmas and can write the same file at the same time.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrate } from './migrate';

export type Db = Database.Database;

export function openDatabase(file: string): Db {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file);
  // busy_timeout first: switching to WAL itself needs a lock another process may hold.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  // NORMAL in WAL mode: a commit is durable against a process crash (kill -9); only an OS crash
  // or power loss can drop the last transactions, never corrupt the file. FULL would fsync the WAL
  // on every commit and cost most of the write throughput on the disks reclib runs on.
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  // Deleted and overwritten content is zeroed, freed pages included: a deleted recording's text must
  // leave the file (CONTRACT §5), not linger in free space. Costs some extra page writes.
  db.pragma('secure_delete = ON');
  migrate(db);
  return db;
}
