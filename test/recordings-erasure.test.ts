// Spec "Deletion" / CONTRACT §5: deletion erases the text from the database and the search index —
// not only from the row: the search vocabulary and the database file itself keep none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { harness } from './helpers/harness';
import { created, patch, remove } from './helpers/recording-client';

describe('deleted text is erased everywhere', () => {
  it('the search vocabulary drops words no live recording has any more, and keeps the others', async () => {
    const h = harness();
    const token = h.key();
    const a = await created(h, token, { type: 'clip', title: 'Crème plans', transcript: 'zebrafinch shared' });
    await created(h, token, { type: 'clip', transcript: 'shared words' });
    const { terms } = h.services.recordings;
    assert.deepEqual(terms.expansions('zebra', 5), ['zebrafinch']);
    assert.deepEqual(terms.expansions('crem', 5), ['creme']);
    await remove(h, token, a.id, '1');
    assert.deepEqual(terms.expansions('zebra', 5), []);
    assert.deepEqual(terms.expansions('crem', 5), []);
    assert.deepEqual(terms.expansions('plan', 5), []);
    assert.deepEqual(terms.expansions('shar', 5), ['shared'], 'still in another recording');
  });

  it('an edit that takes a word out drops it from the vocabulary too', async () => {
    const h = harness();
    const token = h.key();
    const a = await created(h, token, { type: 'clip', transcript: 'call the veterinarian' });
    await patch(h, token, a.id, { transcript: 'call the dentist' }, '1');
    assert.deepEqual(h.services.recordings.terms.expansions('veter', 5), []);
    assert.deepEqual(h.services.recordings.terms.expansions('dent', 5), ['dentist']);
  });

  it('the database file keeps no copy of a deleted title, transcript or summary', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-erase-'));
    try {
      const h = harness({ db: path.join(dir, 'r.db') });
      const token = h.key();
      const marker = 'Xylophonequartz';
      const long = `${marker} `.repeat(800); // overflows its page
      const recs = [
        await created(h, token, { type: 'memo', title: `${marker} title`, transcript: `short ${marker}`, summary: `${marker} summary` }),
        await created(h, token, { type: 'memo', transcript: long }),
      ];
      const { db } = h.services.core;
      db.pragma('wal_checkpoint(TRUNCATE)');
      const file = path.join(dir, 'r.db');
      assert.ok(fs.readFileSync(file).includes(marker), 'sanity: the text is in the file before the delete');
      for (const r of recs) await remove(h, token, r.id, '1');
      db.pragma('wal_checkpoint(TRUNCATE)');
      for (const f of [file, `${file}-wal`]) {
        if (fs.existsSync(f)) assert.ok(!fs.readFileSync(f).includes(marker), `${path.basename(f)} still holds deleted text`);
      }
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
