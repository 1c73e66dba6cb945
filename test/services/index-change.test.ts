// An edit changes only the words that differ in the FTS index (src/services/index-change.ts): the
// index must then hold exactly what a full reindex would, pass FTS5's integrity-check (which also
// compares its per-column token totals with the table), and the words both texts share must not be
// deleted (that is the point: with secure-delete each deleted word costs a seek in every segment).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Db } from '../../src/db/open';
import { indexChange } from '../../src/services/index-change';
import { integrityCheck, matches } from '../helpers/fts';
import { harness } from '../helpers/harness';
import { prng } from '../helpers/prng';

/** What the index should return for a word: the live rows whose title or transcript has it, by FTS5's own tokenizer. */
function expected(db: Db, word: string): number[] {
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.tok USING fts5(t, tokenize = "unicode61 remove_diacritics 2")');
  db.exec('DELETE FROM temp.tok');
  db.exec("INSERT INTO temp.tok (rowid, t) SELECT seq, title || ' ' || transcript FROM recordings WHERE deleted_at IS NULL");
  return (db.prepare('SELECT rowid FROM temp.tok WHERE tok MATCH ? ORDER BY rowid').all(`"${word}"`) as Array<{ rowid: number }>).map((r) => r.rowid);
}

describe('index change of an edit', () => {
  it('deletes the words that left, inserts the words that came, and carries the token counts', () => {
    const change = indexChange({ title: ['a', 'b'], transcript: ['the', 'quick', 'fox'] }, { title: ['a', 'b'], transcript: ['the', 'slow', 'fox', 'fox'] });
    assert.deepEqual(change, { remove: { title: '', transcript: 'quick' }, add: { title: '', transcript: 'slow slow' } });
    // A typo fixed to a word the text already has: nothing new to insert, so a shared word carries the count.
    const typo = indexChange({ title: [], transcript: ['teh', 'cat', 'the'] }, { title: [], transcript: ['the', 'cat', 'the'] });
    assert.ok(typo);
    assert.equal(typo.remove.transcript.split(' ').length - typo.add.transcript.split(' ').filter(Boolean).length, 0);
    // FTS5 refuses a delete that takes a column's total below zero (a library of one recording), so
    // no column's delete lists more tokens than the old text had there.
    const moved = indexChange({ title: [], transcript: ['buy', 'milk'] }, { title: ['edited', 'later'], transcript: ['buy', 'milk'] });
    assert.deepEqual(moved?.remove.title, '');
    assert.ok(moved!.remove.transcript.split(' ').length <= 2, moved!.remove.transcript);
    // A word moved into the title from the transcript: no word left or came, and the title had no
    // word to carry its count. The caller updates the whole row.
    assert.equal(indexChange({ title: [], transcript: ['x', 'y'] }, { title: ['x'], transcript: ['y'] }), null);
  });

  it('a one-word edit of a long text deletes one word from the index, not all of them', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const row = recordings.create(principal, { type: 'memo', title: 'A note', transcript: `${words.join(' ')} teh end` }, 'k').row;
    const deletes: string[] = [];
    const original = recordings.store.saveEdited.bind(recordings.store);
    recordings.store.saveEdited = (r, change) => {
      deletes.push(change.remove.title, change.remove.transcript);
      return original(r, change);
    };
    recordings.update(principal, row.id, { transcript: `${words.join(' ')} the end` }, 1);
    assert.deepEqual(deletes.join(' ').trim().split(/\s+/), ['teh']);
    assert.deepEqual(matches(core.db, 'teh'), []);
    assert.deepEqual(matches(core.db, 'the'), [row.seq]);
    assert.deepEqual(matches(core.db, 'word7'), [row.seq]);
    integrityCheck(core.db);
  });

  it('an edit whose transaction rolls back does not take the tokenizer with it (its scratch tables are made in that transaction)', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const row = recordings.create(principal, { type: 'memo', title: 'note', transcript: 'café au lait' }, 'k').row;
    assert.throws(() =>
      core.writer.write(() => {
        recordings.update(principal, row.id, { transcript: 'café noir' }, 1);
        throw new Error('a later failure in the same transaction');
      }),
    );
    assert.equal(recordings.update(principal, row.id, { transcript: 'café noir' }, 1).transcript, 'café noir');
    assert.deepEqual(matches(core.db, 'noir'), [row.seq]);
    assert.deepEqual(matches(core.db, 'lait'), []);
    integrityCheck(core.db);
  });

  it('a token FTS5 cuts (32,768 bytes, inside a character) leaves no word behind, through edits and the delete', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const long = '中'.repeat(11_000); // one unpunctuated run: one token of 33,000 bytes
    const row = recordings.create(principal, { type: 'memo', title: 'note', transcript: '好' }, 'k').row;
    recordings.update(principal, row.id, { transcript: `${long} 好` }, 1);
    recordings.update(principal, row.id, { transcript: `${long} 好 再见` }, 2);
    integrityCheck(core.db);
    recordings.remove(principal, row.id, 3);
    integrityCheck(core.db);
    core.db.exec("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, recordings_fts, 'row')");
    assert.deepEqual(core.db.prepare('SELECT term FROM temp.words').pluck().all(), [], 'the deleted recording left no word in the index');
  });

  for (const size of [1, 12]) {
  it(`random edits leave the index exactly as a full reindex would, and FTS5 integrity-check passes (${size} recordings)`, () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const rnd = prng(0x1dc + size);
    // ASCII words, words with a separator outside ASCII (’), and words FTS5 folds (Café), which take
    // the full update: both paths are exercised, interleaved on the same rows.
    const vocabulary = ['the', 'of', 'and', 'milk', 'eggs', 'Buy', 'BUY', 'meeting', 'meet', 'don’t', 'x2', '42', 'Café', 'cafe', 'naïve', '—', '...', 'a-b'];
    const text = (n: number) => Array.from({ length: n }, () => vocabulary[Math.floor(rnd() * vocabulary.length)]!).join(rnd() < 0.5 ? ' ' : ', ');
    const rows = Array.from({ length: size }, (_, i) => recordings.create(principal, { type: 'memo', title: text(i % 3), transcript: text(1 + (i % 7)) }, `k${i}`).row);
    let edited = 0;
    let outsideAscii = 0;
    const original = recordings.store.saveEdited.bind(recordings.store);
    recordings.store.saveEdited = (r, change) => {
      edited++;
      if (/[^\x00-\x7f]/.test(r.title + r.transcript)) outsideAscii++; // tokenized by FTS5 itself
      return original(r, change);
    };
    const revisions = new Map(rows.map((r) => [r.id, 1]));
    for (let step = 0; step < 300; step++) {
      const row = rows[Math.floor(rnd() * rows.length)]!;
      const patch = rnd() < 0.3 ? { title: text(Math.floor(rnd() * 4)) } : rnd() < 0.5 ? { transcript: text(Math.floor(rnd() * 9)) } : { title: text(1), transcript: text(3) };
      // Several edits in one transaction sometimes, and a create in the same transaction as its edit.
      if (step % 25 === 0 && size > 1) {
        core.writer.write(() => {
          const fresh = recordings.create(principal, { type: 'clip', transcript: text(4) }, `s${step}`).row;
          recordings.update(principal, fresh.id, { transcript: text(5) }, 1);
          rows.push(fresh);
          revisions.set(fresh.id, 2);
        });
        continue;
      }
      const after = recordings.update(principal, row.id, patch, revisions.get(row.id)!);
      revisions.set(row.id, after.revision);
      if (step % 10 === 0) integrityCheck(core.db);
    }
    integrityCheck(core.db);
    for (const word of ['the', 'of', 'and', 'milk', 'eggs', 'buy', 'meeting', 'meet', 'don', 't', 'x2', '42', 'cafe', 'naive', 'a', 'b']) {
      assert.deepEqual(matches(core.db, word), expected(core.db, word), word);
    }
    assert.ok(edited > 50, `the word-change path ran (${edited} edits)`);
    assert.ok(outsideAscii > 20, `and for text outside ASCII (${outsideAscii} edits)`);
  });
  }
});
