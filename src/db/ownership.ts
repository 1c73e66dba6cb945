// Whether a SQLite file is reclib's to open. reclib creates its schema only in an EMPTY file and
// opens only files it made: another application's database (or a reclib database someone added
// tables of their own to, without reclib's marker) is refused before anything is written, so
// `accounts list --db their.db` cannot convert it. A marked database is reclib's whatever else it
// holds: Litestream, for one, adds its _litestream_seq and _litestream_lock tables. New databases
// carry PRAGMA application_id = RECLIB_APPLICATION_ID (SQLite's field for exactly this,
// https://sqlite.org/fileformat.html#application_id); databases made before the marker existed
// are recognised by their tables (all of them reclib's) and marked on open.
import type Database from 'better-sqlite3';
import { RECLIB_APPLICATION_ID, schemaText } from './migrate';

// The driver's connection type, as migrate.ts names it: open.ts (which exports Db) imports this file.
type Db = Database.Database;

/** What openDatabase may do with a file. */
export type Ownership = 'ours' | 'empty' | 'older-reclib';

export class ForeignDatabaseError extends Error {}

/** How a file reclib wrote in place of a database begins (restore's incomplete mark); open.ts shows its first line. */
export const RECLIB_NOTE = 'reclib: ';

/** The tables schema.sql creates, with the shadow tables of its FTS5 indexes. */
export function reclibTables(): Set<string> {
  const tables = new Set<string>();
  for (const m of schemaText().matchAll(/CREATE\s+(VIRTUAL\s+)?TABLE\s+IF\s+NOT\s+EXISTS\s+(\w+)/gi)) {
    tables.add(m[2]!);
    if (m[1]) for (const shadow of ['data', 'idx', 'content', 'docsize', 'config']) tables.add(`${m[2]}_${shadow}`);
  }
  return tables;
}

/** Reads only (no write, no journal-mode change): a refused file is left byte for byte as it was. */
export function ownership(db: Db): Ownership {
  const appId = db.pragma('application_id', { simple: true }) as number;
  if (appId === RECLIB_APPLICATION_ID) return 'ours';
  const names = db.prepare<[], { name: string; type: string }>('SELECT name, type FROM sqlite_schema').all();
  if (appId === 0 && names.length === 0) {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version === 0) return 'empty';
    throw new ForeignDatabaseError(`it is not a reclib database: it has no tables but user_version ${version}`);
  }
  if (appId !== 0) throw new ForeignDatabaseError(`it belongs to another application (application_id ${appId}), not reclib`);
  const ours = reclibTables();
  // sqlite_*: SQLite's own (sqlite_stat1, sqlite_sequence); _litestream_*: Litestream's bookkeeping.
  const tables = names.filter((n) => n.type === 'table' && !n.name.startsWith('sqlite_') && !n.name.startsWith('_litestream_')).map((n) => n.name);
  const foreign = tables.filter((t) => !ours.has(t));
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 5).join(', ') + (foreign.length > 5 ? ', …' : '');
    throw new ForeignDatabaseError(`it is not a reclib database: it has tables reclib does not create (${shown})`);
  }
  if (!tables.includes('accounts') || !tables.includes('recordings')) {
    throw new ForeignDatabaseError('it is not a reclib database: it has no reclib tables');
  }
  return 'older-reclib';
}
