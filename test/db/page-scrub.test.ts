// src/db/page-scrub.ts: zeroing the unallocated space SQLite leaves stale copies of moved rows in,
// without changing a byte SQLite reads, and finding the pages to zero from the WAL's frames.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PageScrubber, Scrub, scrubPages, unallocatedRange } from '../../src/db/page-scrub';
import { openSqlite } from '../../src/db/sqlite';
import { openWalIndex } from '../../src/db/wal-index';
import { prng } from '../helpers/prng';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-scrub-'));
  file = path.join(dir, 'scrub.db');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A WAL database as reclib opens one (secure_delete on), with rows that grow and move, and every third deleted: the words of the deleted rows. */
function movedAndDeleted(db: ReturnType<typeof openSqlite>): { deleted: string[]; live: string[] } {
  db.pragma('journal_mode = WAL');
  db.pragma('secure_delete = ON');
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, pad TEXT NOT NULL DEFAULT \'\'); CREATE INDEX notes_body ON notes (body)');
  const rnd = prng(7);
  const word = () => `w${Array.from({ length: 11 }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join('')}`;
  const insert = db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)');
  const words: string[] = [];
  db.transaction(() => {
    for (let i = 1; i <= 3000; i++) {
      const w = word();
      words.push(w);
      insert.run(i, `note ${w}`);
    }
  })();
  // Rows that grow in the middle of the table: pages split and share out their cells.
  const grow = db.prepare('UPDATE notes SET pad = ? WHERE id = ?');
  for (let i = 2; i <= 3000; i += 2) grow.run('-'.repeat(100 + Math.floor(rnd() * 300)), i);
  const remove = db.prepare('DELETE FROM notes WHERE id = ?');
  const deleted: string[] = [];
  const live: string[] = [];
  for (let i = 1; i <= 3000; i++) {
    if (i % 3 === 1) {
      remove.run(i);
      deleted.push(words[i - 1]!);
    } else live.push(words[i - 1]!);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  return { deleted, live };
}

const pagesOf = (f: string) => Array.from({ length: Math.floor(fs.statSync(f).size / 4096) }, (_, i) => i + 1);

describe('scrubbing unallocated space', () => {
  it('zeroes the stale copies of deleted rows, and changes nothing SQLite reads', () => {
    const db = openSqlite(file);
    const { deleted, live } = movedAndDeleted(db);
    const before = fs.readFileSync(file);
    const stale = deleted.filter((w) => before.includes(w));
    assert.ok(stale.length > 0, 'sanity: secure_delete left copies of deleted rows behind (moved before they were deleted)');
    const rows = db.prepare('SELECT * FROM notes ORDER BY id').all();

    const fd = fs.openSync(file, 'r+');
    const changed = scrubPages(fd, pagesOf(file));
    fs.closeSync(fd);
    assert.ok(changed > 0);
    const after = fs.readFileSync(file);
    assert.deepEqual(deleted.filter((w) => after.includes(w)), [], 'no deleted word is left in the file');
    assert.ok(live.every((w) => after.includes(w)), 'every live row is still there');
    // Only unallocated bytes changed: a second connection reads the same rows, the file is sound.
    const fresh = openSqlite(file);
    assert.deepEqual(fresh.prepare('SELECT * FROM notes ORDER BY id').all(), rows);
    assert.equal(fresh.pragma('integrity_check', { simple: true }), 'ok');
    fresh.close();
    db.close();
    // Every changed byte was zero afterwards and lay in a page's unallocated range.
    for (let p = 0; p < before.length; p += 4096) {
      const page = before.subarray(p, p + 4096);
      const range = unallocatedRange(Buffer.from(page), p / 4096 + 1, 4096);
      for (let i = 0; i < 4096; i++) {
        if (before[p + i] === after[p + i]) continue;
        assert.ok(range && i >= range.start && i < range.end && after[p + i] === 0, `page ${p / 4096 + 1} byte ${i} changed outside its unallocated range`);
      }
    }
  });

  it('after a slice, a connection that had the pages cached does not write the stale copies back', () => {
    const writer = openSqlite(file);
    writer.pragma('cache_size = -65536'); // every page of the file stays in its cache
    const { deleted } = movedAndDeleted(writer);
    // The writer reads every page (table and index) back into its cache, stale middles included.
    writer.prepare('SELECT * FROM notes').all();
    writer.prepare('SELECT body FROM notes INDEXED BY notes_body').all();
    assert.ok(deleted.some((w) => fs.readFileSync(file).includes(w)), 'sanity: stale copies of deleted rows are in the file');

    const checkpointer = openSqlite(file);
    const scrub = new Scrub(PageScrubber.open(file, openWalIndex(file))!, openSqlite(file), checkpointer, 50, () => fs.statSync(`${file}-wal`).size);
    for (let i = 0; i < 100 && scrub.figures().scrubBacklog > 0; i++) assert.ok(scrub.slice(1_000 * i));
    assert.equal(scrub.figures().scrubBacklog, 0);
    assert.deepEqual(deleted.filter((w) => fs.readFileSync(file).includes(w)), [], 'sanity: the slices zeroed them');

    // Changes every row in place (same size; SQLite writes a page only if its bytes change): each
    // table page goes to the WAL as the writer has it.
    writer.exec("UPDATE notes SET body = 'N' || substr(body, 2)");
    const wal = fs.readFileSync(`${file}-wal`);
    assert.deepEqual(deleted.filter((w) => wal.includes(w)), [], 'the writer wrote pages as they are now, not as it had cached them');
    scrub.close();
    checkpointer.close();
    writer.close();
  });

  it('refuses a file in auto_vacuum mode, whose pointer-map pages look like b-tree pages', () => {
    const db = openSqlite(file);
    movedAndDeleted(db);
    db.pragma('auto_vacuum = INCREMENTAL');
    db.exec('VACUUM'); // as a user's shell could, while the server runs
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = fs.readFileSync(file);
    const fd = fs.openSync(file, 'r+');
    assert.equal(scrubPages(fd, pagesOf(file)), 0);
    fs.closeSync(fd);
    assert.ok(fs.readFileSync(file).equals(before), 'not a byte written');
    assert.equal(PageScrubber.open(file, openWalIndex(file)), undefined);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();
  });

  for (const lost of ['truncated', 'partly overwritten'] as const) {
    it(`frames appended behind a reader after its own complete checkpoint, then ${lost} by another connection: a whole-file pass`, () => {
      const db = openSqlite(file);
      db.pragma('journal_mode = WAL');
      db.pragma('wal_autocheckpoint = 0');
      db.exec('CREATE TABLE t (x TEXT)');
      db.pragma('wal_checkpoint(TRUNCATE)');
      const scrubber = PageScrubber.open(file, openWalIndex(file))!;
      db.exec('BEGIN IMMEDIATE');
      scrubber.slice(1_000_000, true);
      db.exec('COMMIT');
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      for (let i = 0; i < 5; i++) insert.run(`a ${i}`);
      const holder = openSqlite(file);
      holder.exec('BEGIN');
      holder.prepare('SELECT count(*) FROM t').get(); // the WAL cannot start over under this reader
      scrubber.collect();
      scrubber.checkpointed((db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!);
      /** The WAL index's mxFrame, read without collecting. */
      const mxFrame = () => fs.readFileSync(`${file}-shm`).readUInt32LE(16);
      const own = mxFrame();
      db.transaction(() => {
        for (let i = 0; i < 200; i++) insert.run(`appended ${i} ${'s'.repeat(500)}`);
      })();
      const appended = mxFrame();
      holder.exec('COMMIT');
      holder.close();
      const other = openSqlite(file);
      if (lost === 'truncated') {
        other.pragma('wal_checkpoint(TRUNCATE)');
        insert.run('the next generation');
      } else {
        other.pragma('wal_checkpoint(PASSIVE)');
        // The next generation writes over the first appended frames, not the last.
        while (mxFrame() <= own + 1 || mxFrame() === appended) insert.run('the next generation');
        assert.ok(mxFrame() < appended, 'sanity: some appended frames are still there');
      }
      scrubber.collect();
      assert.equal(scrubber.missed, 1);
      other.close();
      scrubber.close();
      db.close();
    });
  }

  it('leaves overflow pages and the header of page 1 alone, and takes no other kind of page for a b-tree page', () => {
    const db = openSqlite(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x TEXT)');
    // An overflow chain whose pages start with a page number: not b-tree pages.
    const big = Array.from({ length: 20_000 }, (_, i) => String.fromCharCode(33 + (i % 90))).join('');
    db.prepare('INSERT INTO t VALUES (?)').run(big);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = fs.readFileSync(file);
    const fd = fs.openSync(file, 'r+');
    scrubPages(fd, pagesOf(file));
    fs.closeSync(fd);
    assert.equal((db.prepare('SELECT x FROM t').get() as { x: string }).x, big);
    assert.ok(fs.readFileSync(file).subarray(0, 100).equals(before.subarray(0, 100)), 'the database header is untouched');
    // A page of some other kind is never taken for a b-tree page.
    const overflow = Buffer.alloc(4096, 0x41);
    overflow.writeUInt32BE(7, 0);
    assert.equal(unallocatedRange(overflow, 9, 4096), undefined);
    const bogus = Buffer.alloc(4096);
    bogus[0] = 13;
    bogus.writeUInt16BE(5000, 5); // content past the page's end
    assert.equal(unallocatedRange(bogus, 9, 4096), undefined);
    db.close();
  });

  it('finds the pages to scrub in the WAL, and goes through the whole file when another connection copied frames it never saw', () => {
    const db = openSqlite(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const scrubber = PageScrubber.open(file, openWalIndex(file))!;
    assert.ok(scrubber, 'Linux: the WAL index can be read');
    const whole = scrubber.backlog;
    assert.ok(whole > 0, 'a scrubber starts with a pass over the whole file');
    db.exec('BEGIN IMMEDIATE');
    assert.equal(scrubber.slice(10_000, true), 0, 'a fresh file has nothing to zero');
    db.exec('COMMIT');
    assert.equal(scrubber.backlog, 0);

    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run(`row ${i} ${'x'.repeat(200)}`);
    scrubber.collect();
    assert.ok(scrubber.backlog > 0 && scrubber.backlog < whole + 20, `the pages the inserts wrote are due (${scrubber.backlog})`);
    const r = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    scrubber.checkpointed(r[0]!);
    insert.run('after its own checkpoint');
    scrubber.collect();
    assert.equal(scrubber.missed, 0, 'its own complete checkpoint explains the WAL starting over');

    // Another connection copies frames this scrubber has not collected, and a writer makes the
    // WAL start over: the old frames past the new generation's are still there, and collected.
    for (let i = 0; i < 20; i++) insert.run(`before ${i}`);
    const reader = openSqlite(file); // holds the WAL: it cannot start over under the inserts below
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM t').get();
    scrubber.collect();
    const other = openSqlite(file);
    other.pragma('wal_checkpoint(PASSIVE)');
    db.transaction(() => {
      for (let i = 0; i < 300; i++) insert.run(`copied by another ${i} ${'y'.repeat(300)}`);
    })();
    reader.exec('COMMIT');
    const copied = (other.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!;
    assert.ok(copied.log > 20 && copied.checkpointed === copied.log);
    insert.run('starts the WAL over');
    const before = scrubber.backlog;
    scrubber.collect();
    assert.equal(scrubber.missed, 0, 'nothing was lost');
    assert.ok(scrubber.backlog >= before + 20, `the pages of the frames the other connection copied are due (${before} → ${scrubber.backlog})`);

    // Frames appended after this scrubber's own complete checkpoint (a reader held the WAL, so
    // it could not start over), then copied by another connection before the WAL started over:
    // read past the new generation's frames all the same.
    insert.run('before the reader');
    const holder = openSqlite(file);
    holder.exec('BEGIN');
    holder.prepare('SELECT count(*) FROM t').get();
    scrubber.collect();
    scrubber.checkpointed((db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!);
    db.transaction(() => {
      for (let i = 0; i < 300; i++) insert.run(`behind the reader ${i} ${'z'.repeat(300)}`);
    })();
    holder.exec('COMMIT');
    holder.close();
    other.pragma('wal_checkpoint(PASSIVE)');
    insert.run('starts over once more');
    const beforeHeld = scrubber.backlog;
    scrubber.collect();
    assert.equal(scrubber.missed, 0);
    assert.ok(scrubber.backlog >= beforeHeld + 20, `the frames behind the reader were collected (${beforeHeld} → ${scrubber.backlog})`);

    // Every frame collected, the WAL file at its largest, another connection copies and the WAL
    // starts over: the old generation ends at the file's end, and nothing is missing.
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`the largest yet ${i} ${'w'.repeat(400)}`);
    })();
    scrubber.collect();
    other.pragma('wal_checkpoint(PASSIVE)');
    insert.run('starts over after the largest');
    scrubber.collect();
    assert.equal(scrubber.missed, 0, 'a generation ending at the end of the file is not taken for a truncated one');

    // A whole generation comes and goes between two looks: the whole file is due.
    insert.run('one more');
    scrubber.collect();
    other.pragma('wal_checkpoint(PASSIVE)');
    insert.run('a generation unseen'); // starts over
    other.pragma('wal_checkpoint(PASSIVE)');
    insert.run('and another'); // starts over again
    scrubber.collect();
    assert.equal(scrubber.missed, 1);
    other.close();
    reader.close();

    // Another connection checkpoints frames this scrubber never collected and empties the WAL.
    for (let i = 0; i < 50; i++) insert.run(`unseen ${i}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    insert.run('next generation');
    scrubber.collect();
    assert.equal(scrubber.missed, 2);
    assert.ok(scrubber.backlog >= Math.floor(fs.statSync(file).size / 4096), 'the whole file is due again');
    scrubber.close();
    db.close();
  });
});
