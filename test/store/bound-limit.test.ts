// A LIMIT (or OFFSET) bound as a bare parameter makes SQLite 3.47 and later prepare the statement
// again at every run (src/store/bound-limit.ts says why); limitTo() is how the sources bind one.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openSqlite } from '../../src/db/sqlite';
import { limitTo } from '../../src/store/bound-limit';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function* sources(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (/\.tsx?$/.test(e.name)) yield p;
  }
}

describe('LIMIT with a bound parameter', () => {
  it('no SQL in the sources binds LIMIT or OFFSET as a bare parameter (?, @name, :name, $name)', () => {
    // \s spans line ends: a LIMIT at the end of one line and its parameter on the next count too.
    const bare = /\b(LIMIT|OFFSET)\s+[?@:]|\b(LIMIT|OFFSET)\s+\$(?!\{)/;
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(new RegExp(bare.source, 'g'))) {
        const line = text.slice(0, m.index).split('\n').length;
        found.push(`${path.relative(SRC, file)}:${line}: ${m[0].replaceAll(/\s+/g, ' ')}`);
      }
    }
    assert.deepEqual(found, [], 'use limitTo() from src/store/bound-limit.ts');
    assert.ok(!bare.test(limitTo('?')) && !bare.test(limitTo('@limit')));
    assert.ok(bare.test('SELECT 1 LIMIT ?') && bare.test('LIMIT @limit') && bare.test('OFFSET $n') && bare.test('ORDER BY seq LIMIT\n  ?'), 'the pattern finds what it is for');
  });

  it('limitTo() limits like a bare parameter: the bound count, and none for a negative one', () => {
    const db = openSqlite(':memory:');
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3), (4)');
    const named = db.prepare<{ n: number }, number>(`SELECT x FROM t ORDER BY x ${limitTo('@n')}`).pluck();
    const positional = db.prepare<[number], number>(`SELECT x FROM t ORDER BY x ${limitTo('?')}`).pluck();
    assert.deepEqual(named.all({ n: 2 }), [1, 2]);
    assert.deepEqual(named.all({ n: 3 }), [1, 2, 3]);
    assert.deepEqual(positional.all(1), [1]);
    assert.deepEqual(positional.all(0), []);
    assert.deepEqual(positional.all(-1), [1, 2, 3, 4]);
    db.close();
  });
});
