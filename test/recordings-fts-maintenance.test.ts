// The search index follows the table inside each write (schema triggers) and is kept compact in
// small merge slices after commits, never by a blocking 'optimize' (issue 3, item 2).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from './helpers/harness';

describe('FTS upkeep', () => {
  it('a bounded merge slice (64 pages) runs after every 64 index-changing writes, in a transaction of its own', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const calls: Array<{ pages: number; rows: number }> = [];
    const original = recordings.store.mergeSlice.bind(recordings.store);
    recordings.store.mergeSlice = (pages: number) => {
      // It runs after the create that triggered it (whose row is counted), from the commit hook.
      calls.push({ pages, rows: (core.db.prepare('SELECT count(*) AS n FROM recordings').get() as { n: number }).n });
      assert.ok(core.db.inTransaction, 'inside a Writer transaction of its own');
      original(pages);
    };
    for (let i = 0; i < 10; i++) recordings.create(principal, { type: 'clip' }, `empty-${i}`); // no text: no index write
    for (let i = 0; i < 63; i++) recordings.create(principal, { type: 'clip', transcript: `words ${i}` }, `t-${i}`);
    assert.equal(calls.length, 0);
    recordings.create(principal, { type: 'clip', transcript: 'the 64th' }, 't-63');
    assert.deepEqual(calls, [{ pages: 64, rows: 74 }]);
  });

  it('a failing merge slice does not fail the write it follows', () => {
    const h = harness();
    const { recordings } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    recordings.store.mergeSlice = () => {
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    };
    for (let i = 0; i < 64; i++) recordings.create(principal, { type: 'clip', transcript: `w${i}` }, `k-${i}`);
    assert.equal(recordings.list(principal, { limit: 100 }).rows.length, 64);
  });

  it('the index passes FTS5 integrity-check after creates, edits and deletes', () => {
    const h = harness();
    const { recordings, core } = h.services;
    const principal = h.services.auth.authenticate(h.key());
    const rows = Array.from({ length: 40 }, (_, i) =>
      recordings.create(principal, { type: 'memo', title: i % 3 ? `title ${i}` : '', transcript: i % 4 ? `spoken words number ${i}` : '' }, `k-${i}`).row,
    );
    rows.forEach((r, i) => {
      if (i % 5 === 0) recordings.remove(principal, r.id, 1);
      else if (i % 2 === 0) recordings.update(principal, r.id, { transcript: i % 4 ? '' : `new words ${i}`, title: 'edited' }, 1);
    });
    core.db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
    const indexed = core.db.prepare("SELECT count(*) AS n FROM recordings_fts WHERE recordings_fts MATCH 'edited OR words OR title'").get() as { n: number };
    const live = core.db.prepare("SELECT count(*) AS n FROM recordings WHERE deleted_at IS NULL AND (title <> '' OR transcript <> '')").get() as { n: number };
    assert.equal(indexed.n, live.n);
  });
});
