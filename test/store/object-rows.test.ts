// objectRows() reads rows as raw arrays and builds the objects in JavaScript (src/store/object-rows.ts
// says why): the objects must be the ones better-sqlite3 makes, an iteration ended early must
// leave the connection free, and a schema change under a wrapped statement must not shift its
// values to other names. (On Node 22 and later the Node-API build's statements are used as they
// are, and the same checks hold of them: run under Node 24.21, all pass.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/open';
import { openSqlite } from '../../src/db/sqlite';
import { EVENT_COLUMNS } from '../../src/store/event-store';
import { objectRows, rowBuilder } from '../../src/store/object-rows';
import { RECORDING_COLUMNS } from '../../src/store/recording-row';

function fixture() {
  const db = openSqlite(':memory:');
  db.exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, note TEXT, size REAL, data BLOB, gone INTEGER);
    INSERT INTO t VALUES (1, 'a', NULL, 1.5, x'00ff', NULL), (2, 'é ü', 'x', 0, NULL, 7), (3, '', '', -2, x'', 0)`);
  return db;
}

describe('objectRows()', () => {
  it('get, all and iterate return what better-sqlite3 returns: values, types, key order', () => {
    const db = fixture();
    for (const sql of [
      'SELECT id, name, note, size, data, gone FROM t ORDER BY id',
      'SELECT name AS "the name", id + 1 AS next, data FROM t ORDER BY id DESC',
      'SELECT 1 AS x, 2 AS x, 3 AS y',
      'SELECT count(*) AS n, sum(size) FROM t',
    ]) {
      const plain = db.prepare<[], Record<string, unknown>>(sql);
      const built = objectRows(db.prepare<[], Record<string, unknown>>(sql));
      const expected = plain.all();
      assert.deepEqual(built.all(), expected, sql);
      assert.deepEqual([...built.iterate()], expected, sql);
      assert.deepEqual(built.get(), plain.get(), sql);
      // Same keys in the same order (deepEqual does not compare order), and plain objects.
      assert.deepEqual(built.all().map((r) => Object.keys(r)), expected.map((r) => Object.keys(r)), sql);
      assert.ok(built.all().every((r) => Object.getPrototypeOf(r) === Object.prototype));
    }
  });

  it('binds parameters as the statement does (positional and named), and get() is undefined without a row', () => {
    const db = fixture();
    const byId = objectRows(db.prepare<[number], { id: number; name: string }>('SELECT id, name FROM t WHERE id = ?'));
    assert.deepEqual(byId.get(2), { id: 2, name: 'é ü' });
    assert.equal(byId.get(9), undefined);
    const range = objectRows(db.prepare<[{ lo: number; hi: number }], { id: number }>('SELECT id FROM t WHERE id BETWEEN @lo AND @hi ORDER BY id'));
    assert.deepEqual(range.all({ lo: 2, hi: 3 }), [{ id: 2 }, { id: 3 }]);
  });

  it('an iteration ended early releases the statement and the connection', () => {
    const db = fixture();
    const rows = objectRows(db.prepare<[], { id: number }>('SELECT id FROM t ORDER BY id'));
    for (const row of rows.iterate()) {
      assert.equal(row.id, 1);
      break;
    }
    // A statement still iterating would make this throw ("This statement is busy executing a query").
    assert.deepEqual(rows.all(), [{ id: 1 }, { id: 2 }, { id: 3 }]);
    db.exec('UPDATE t SET name = name');
    const it = rows.iterate();
    assert.deepEqual(it.next(), { done: false, value: { id: 1 } });
    assert.deepEqual(it.return?.(), { done: true, value: undefined });
    assert.deepEqual(it.next().done, true);
    assert.equal(rows.get()?.id, 1);
  });

  it('refuses a select list with * (its columns could change under it), not a count(*)', () => {
    const db = fixture();
    for (const sql of ['SELECT * FROM t', 'select t.* from t', 'SELECT DISTINCT * FROM t', 'SELECT id, * FROM t', 'SELECT id,"t".* FROM t']) {
      assert.throws(() => objectRows(db.prepare(sql)), /columns named/, sql);
    }
    assert.deepEqual(objectRows(db.prepare('SELECT count(*) AS n FROM t')).get(), { n: 3 });
  });

  it('keeps each value under its own name after the schema changes under the statement', () => {
    const db = fixture();
    const rows = objectRows(db.prepare<[], Record<string, unknown>>('SELECT id, name, size FROM t ORDER BY id'));
    assert.deepEqual(rows.get(), { id: 1, name: 'a', size: 1.5 });
    // SQLite prepares the statement again at its next run; a `SELECT *` would now return other columns.
    db.exec('ALTER TABLE t DROP COLUMN note; ALTER TABLE t ADD COLUMN extra TEXT');
    assert.deepEqual(rows.all(), [
      { id: 1, name: 'a', size: 1.5 },
      { id: 2, name: 'é ü', size: 0 },
      { id: 3, name: '', size: -2 },
    ]);
  });

  it('RECORDING_COLUMNS and EVENT_COLUMNS are the tables\' columns in their order (what SELECT * returned)', () => {
    const db = openDatabase(':memory:');
    const columns = (table: string) => (db.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).pluck().all() as string[]);
    assert.deepEqual([...RECORDING_COLUMNS], columns('recordings'));
    assert.deepEqual(EVENT_COLUMNS.split(', '), columns('events'));
    db.close();
  });

  it('makes own properties of any column name, and refuses __proto__', () => {
    const build = rowBuilder(['a b', '"quoted"', 'constructor', '1']);
    const row = build([1, 2, 3, 4]) as Record<string, unknown>;
    assert.deepEqual(Object.entries(row), [['1', 4], ['a b', 1], ['"quoted"', 2], ['constructor', 3]]);
    assert.throws(() => rowBuilder(['x', '__proto__']), /__proto__/);
  });
});
