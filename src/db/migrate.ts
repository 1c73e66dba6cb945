// schema.sql is the database's one definition. A new database gets it whole; an older one gets
// the numbered steps after its user_version (each drops or reshapes what changed), then the file
// again: all DDL uses IF NOT EXISTS, so that adds exactly what the steps dropped or what is new.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';

// The connection's type straight from the driver: open.ts runs migrate(), so naming its Db here
// would make the two modules import each other.
type Db = Database.Database;

/** PRAGMA application_id of a reclib database: 'rclb' as a 32-bit big-endian integer (see ownership.ts). */
export const RECLIB_APPLICATION_ID = 0x72636c62;

/**
 * The page size of a reclib database (PRAGMA page_size; SQLite's default is 4 KB). A recording is
 * 1-3 KB of row, and a 4 KB page holds one or two of them with the rest of the page unused (19% of
 * the recordings table at 100,000); in 16 KB pages the rows pack to within a few percent (the table
 * 173 → 152 MB, the whole file 2.66 → 2.49 bytes per byte of text). A new file gets it (open.ts);
 * migration 5 rewrites an older file once with it (VACUUM).
 */
export const PAGE_SIZE = 16_384;

/** Bump together with a new entry in `steps` when schema.sql changes shape. */
export const SCHEMA_VERSION = 7;

/** Drops the FTS index and the triggers that write it (schema.sql creates them anew, empty). */
const DROP_INDEX = `DROP TRIGGER IF EXISTS recordings_fts_note_insert;
      DROP TRIGGER IF EXISTS recordings_fts_note_update;
      DROP TRIGGER IF EXISTS recordings_fts_note_delete;
      DROP TABLE IF EXISTS recordings_fts;`;

/** Migrations from version N-1 to N for databases created by an older schema.sql. */
const steps: Record<number, string> = {
  // 2: the FTS index is written once per transaction from recordings_fts_pending (see schema.sql).
  // No row is pending between transactions, so the old per-row triggers can simply be replaced.
  2: `DROP TRIGGER IF EXISTS recordings_fts_insert;
      DROP TRIGGER IF EXISTS recordings_fts_update;
      DROP TRIGGER IF EXISTS recordings_fts_delete;`,
  // 3: only additions (the deliveries_webhook_log index), which schema.sql itself brings.
  3: '',
  // 4: the FTS index keeps no positions (detail = none), and the recordings table is keyed by
  // pos = -seq (see schema.sql). Neither can change in place: the index and the triggers that write
  // it are dropped, the recordings and their idempotency keys (which refer to them by key) are
  // moved aside with their indexes dropped, schema.sql creates everything anew, `refill` copies the
  // rows back, oldest first (so each b-tree is written left to right, pages full), and drops the
  // old tables; INDEX_ALL then indexes every live recording with text.
  4: `${DROP_INDEX}
      DROP INDEX IF EXISTS recordings_account;
      DROP INDEX IF EXISTS recordings_account_type;
      DROP INDEX IF EXISTS recordings_account_status;
      DROP INDEX IF EXISTS recordings_account_device;
      DROP INDEX IF EXISTS recordings_account_source;
      DROP INDEX IF EXISTS recordings_external;
      ALTER TABLE recording_keys RENAME TO recording_keys_v3;
      ALTER TABLE recordings RENAME TO recordings_v3;`,
  // 5: the FTS index has no prefix index (see schema.sql), which cannot be dropped in place: the
  // index and its triggers are dropped, schema.sql creates them anew and INDEX_ALL indexes every
  // live recording with text again.
  5: DROP_INDEX,
  // 6: the index writes leaves of ~2,000 bytes (FTS5 'pgsz', see schema.sql), which schema.sql sets.
  // Nothing is rewritten: segments written from now on have them, older ones once they are merged.
  6: '',
  // 7: idle merging merges levels of four segments or more (FTS5 'usermerge' 4, see schema.sql),
  // which schema.sql sets. The index is rewritten only by the merger, in slices, when idle.
  7: '',
};

/** The recordings columns of schemas 1-3 (all but the key), copied by migration 4. */
const RECORDING_COLUMNS_V3 = `id, account_id, integration_id, type, title, transcript, summary, recorded_at, created_at,
  updated_at, revision, status, pinned, device_id, external_id, source, capture_input, native, text_saved,
  processing_updated_at, processing_message, audio, body_hash, deleted_at`;

/**
 * Indexes every live recording with text, once, after the refills of a migration through a step
 * that dropped the index (schema.sql creates it empty). The copy of migration 4 fires the noting
 * trigger; the index is then written once from the table instead.
 */
const INDEX_ALL = `DELETE FROM recordings_fts_pending;
  INSERT INTO recordings_fts (rowid, title, transcript)
    SELECT seq, title, transcript FROM recordings WHERE deleted_at IS NULL AND (title <> '' OR transcript <> '');`;

/** Run after schema.sql for a database that went through step N (what needs the new tables). */
const refill: Record<number, string> = {
  4: `INSERT INTO recordings (pos, seq, ${RECORDING_COLUMNS_V3})
        SELECT -seq, seq, ${RECORDING_COLUMNS_V3} FROM recordings_v3 ORDER BY seq DESC;
      INSERT INTO recording_keys (integration_id, key, recording_pos, created_at)
        SELECT integration_id, key, -recording_seq, created_at FROM recording_keys_v3;
      DROP TABLE recording_keys_v3;
      DROP TABLE recordings_v3;`,
};

/** The steps that drop the FTS index (DROP_INDEX). */
const REINDEXING_STEPS = [4, 5];
/** The step after which a file is rewritten with PAGE_SIZE pages (repage). */
const REPAGING_STEP = 5;

let cached: string | undefined;

/** Finds schema.sql beside the checkout (src/db → ../../) or beside the bundle (dist → ../). */
export function schemaText(): string {
  if (cached !== undefined) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = path.join(dir, 'schema.sql');
    if (fs.existsSync(candidate)) return (cached = fs.readFileSync(candidate, 'utf8'));
    dir = path.dirname(dir);
  }
  throw new Error('schema.sql not found next to the program');
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const marked = db.pragma('application_id', { simple: true }) === RECLIB_APPLICATION_ID;
  if (current === SCHEMA_VERSION && marked) return;
  if (current > SCHEMA_VERSION) {
    throw new Error(`database schema version ${current} is newer than this reclib (${SCHEMA_VERSION}); upgrade reclib`);
  }
  const apply = db.transaction(() => {
    // Read again under the write lock: a server and a CLI opening a new file together must not
    // both run the steps.
    const locked = db.pragma('user_version', { simple: true }) as number;
    // Marks the file as reclib's (src/db/ownership.ts); databases from before the marker get it here.
    if (db.pragma('application_id', { simple: true }) !== RECLIB_APPLICATION_ID) db.pragma(`application_id = ${RECLIB_APPLICATION_ID}`);
    if (locked === SCHEMA_VERSION) return;
    if (locked > 0) for (let v = locked + 1; v <= SCHEMA_VERSION; v++) db.exec(steps[v] ?? '');
    db.exec(schemaText());
    if (locked > 0) for (let v = locked + 1; v <= SCHEMA_VERSION; v++) db.exec(refill[v] ?? '');
    if (locked > 0 && REINDEXING_STEPS.some((v) => v > locked)) db.exec(INDEX_ALL);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  apply.immediate();
  if (current > 0 && current < REPAGING_STEP) repage(db);
}

/**
 * Rewrites the file with PAGE_SIZE pages (once, after migration 5). VACUUM cannot change the page
 * size of a WAL file, so the connection leaves WAL mode for it and returns; that needs the file to
 * itself, which a server opening its database has (its other connections open after). If another
 * process has it open, the file keeps its pages (correct, only larger) and this says so.
 */
function repage(db: Db): void {
  if ((db.pragma('page_size', { simple: true }) as number) >= PAGE_SIZE || db.memory) return;
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.exec('VACUUM');
  } catch (e) {
    process.emitWarning(`reclib: the database keeps its ${db.pragma('page_size', { simple: true })}-byte pages (${(e as Error).message}); it works as it is, only larger`);
  } finally {
    db.pragma('journal_mode = WAL');
  }
}
