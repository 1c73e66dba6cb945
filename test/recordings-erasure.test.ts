// Spec "Deletion" / CONTRACT §5: deletion erases the text from the database and the search index —
// not only from the row: the search vocabulary and the database file itself keep none of it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config';
import { WalEraser } from '../src/db/wal-eraser';
import { openRuntime } from '../src/runtime';
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

  it('the WAL file keeps no copy either: the server truncates it shortly after a delete commits', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-erase-wal-'));
    const file = path.join(dir, 'r.db');
    const services = openRuntime(loadConfig({ db: file }, {}));
    try {
      const account = services.auth.createAccount('me');
      const principal = services.auth.authenticate(services.auth.createKey(account.id, { name: 'k', permissions: ['recordings:create', 'recordings:delete'] }).secret);
      const marker = 'Quetzalmarmalade';
      const r = services.recordings.create(principal, { type: 'memo', title: `${marker} call`, transcript: `remember ${marker}` }, 'k1');
      services.recordings.create(principal, { type: 'clip', transcript: 'a later write after the delete' }, 'k2');
      services.recordings.remove(principal, r.row.id, 1);
      const wal = `${file}-wal`;
      assert.ok(fs.readFileSync(wal).includes(marker), 'sanity: before the eraser runs, the WAL holds the deleted text');
      const eraser = services.workers.find((w): w is WalEraser => w instanceof WalEraser);
      assert.ok(eraser, 'serve runs a WalEraser on a file database');
      const started = Date.now();
      eraser.start(); // due since the delete committed: truncates after ERASE_DELAY_MS
      while (fs.statSync(wal).size > 0 && Date.now() - started < 5000) await new Promise((ok) => setTimeout(ok, 50));
      await eraser.stop();
      assert.equal(fs.statSync(wal).size, 0, 'the WAL was truncated');
      assert.ok(!fs.readFileSync(file).includes(marker), 'the database file holds no deleted text');
      const kept = services.recordings.create(principal, { type: 'clip', transcript: 'writes go on afterwards' }, 'k3');
      assert.equal(kept.replayed, false);
    } finally {
      services.core.db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
