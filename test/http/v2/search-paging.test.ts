// GET /api/v2/recordings filters and paging (endpoint rules 7-8, docs/decisions.md §5), and their
// cost: every listing reads in index order, never sorting its matches (EXPLAIN QUERY PLAN), so a
// page costs its size, not the size of the library.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openDatabase } from '../../../src/db/open';
import { RECORDING_COLUMNS } from '../../../src/store/recording-row';
import { RecordingSearchStore } from '../../../src/store/recording-search-store';
import { harness } from '../../helpers/harness';
import { assertError, created, list, remove, searchIds } from '../../helpers/recording-client';

function setup() {
  const h = harness();
  const token = h.key();
  const app = h.services.auth.authenticate(h.key());
  /** Creates through the service, so deviceId (v1 capture metadata) can be set too. */
  const add = (input: { type?: 'clip' | 'memo'; recordedAt?: number; deviceId?: string; transcript?: string }) =>
    h.services.recordings.create(app, { type: 'clip', ...input }, `k${Math.random()}`).row;
  return { h, token, add };
}

describe('listing filters', () => {
  it('newest first by capture time; the same capture time lists the later created first', async () => {
    const { h, token, add } = setup();
    const a = add({ recordedAt: 2000 });
    const b = add({ recordedAt: 1000 });
    const c = add({ recordedAt: 3000 });
    const d = add({ recordedAt: 2000 });
    assert.deepEqual(await searchIds(h, token, {}), [c.id, d.id, a.id, b.id]);
  });

  it('type, deviceId and status filter; the latest clip is type=clip&limit=1, pending included', async () => {
    const { h, token, add } = setup();
    const memo = add({ type: 'memo', recordedAt: 10, transcript: 'x' });
    const clipOld = add({ type: 'clip', recordedAt: 5, deviceId: 'ring-1', transcript: 'y' });
    const clipNew = add({ type: 'clip', recordedAt: 8, deviceId: 'pin-1' });
    assert.deepEqual(await searchIds(h, token, { type: 'clip', limit: 1 }), [clipNew.id]);
    const latest = (await list(h, token, { type: 'clip', limit: 1 })).json.recordings[0];
    assert.equal(latest.status, 'pending');
    assert.deepEqual(await searchIds(h, token, { type: 'memo' }), [memo.id]);
    assert.deepEqual(await searchIds(h, token, { deviceId: 'ring-1' }), [clipOld.id]);
    assert.deepEqual(await searchIds(h, token, { status: 'ready' }), [memo.id, clipOld.id]);
    assert.deepEqual(await searchIds(h, token, { status: 'ready', type: 'clip', q: 'y' }), [clipOld.id]);
  });

  it('from and to are inclusive capture times', async () => {
    const { h, token, add } = setup();
    const [a, b, c] = [add({ recordedAt: 100 }), add({ recordedAt: 200 }), add({ recordedAt: 300 })];
    assert.deepEqual(await searchIds(h, token, { from: 200 }), [c.id, b.id]);
    assert.deepEqual(await searchIds(h, token, { to: 200 }), [b.id, a.id]);
    assert.deepEqual(await searchIds(h, token, { from: 200, to: 200 }), [b.id]);
    assert.deepEqual(await searchIds(h, token, { from: Number.MAX_SAFE_INTEGER }), []);
    assert.deepEqual(await searchIds(h, token, { to: Number.MAX_SAFE_INTEGER }), [c.id, b.id, a.id]);
    assertError(await list(h, token, { from: 300, to: 200 }), 400, 'invalid_request', 'from');
  });

  it('deleted recordings and other accounts are not listed', async () => {
    const { h, token } = setup();
    const keep = await created(h, token, { type: 'clip', transcript: 'keep' });
    const gone = await created(h, token, { type: 'clip', transcript: 'keep too' });
    await remove(h, token, gone.id, '1');
    const other = h.services.auth.createAccount('other');
    const theirs = h.services.auth.createKey(other.id, { name: 'k', permissions: ['recordings:create', 'recordings:read'] }).secret;
    await created(h, theirs, { type: 'clip', transcript: 'keep' });
    assert.deepEqual(await searchIds(h, token, {}), [keep.id]);
    assert.deepEqual(await searchIds(h, token, { q: 'keep' }), [keep.id]);
  });

  it('malformed or empty filter values and unknown parameters are 400', async () => {
    const { h, token } = setup();
    const bad: Array<[Record<string, string>, string]> = [
      [{ type: 'note' }, 'type'], [{ type: '' }, 'type'], [{ status: 'done' }, 'status'], [{ deviceId: '-x' }, 'deviceId'],
      [{ from: '-1' }, 'from'], [{ from: '1.5' }, 'from'], [{ to: 'yesterday' }, 'to'], [{ from: '9007199254740992' }, 'from'],
      [{ limit: '0' }, 'limit'], [{ limit: '101' }, 'limit'], [{ limit: '' }, 'limit'], [{ cursor: '' }, 'cursor'], [{ kind: 'clip' }, 'kind'],
    ];
    for (const [query, field] of bad) assertError(await list(h, token, query), 400, 'invalid_request', field);
  });

  it('limit defaults to 50 and is at most 100', async () => {
    const { h, token, add } = setup();
    for (let i = 0; i < 120; i++) add({ recordedAt: i });
    assert.equal((await searchIds(h, token, {})).length, 50);
    assert.equal((await searchIds(h, token, { limit: 100 })).length, 100);
  });
});

describe('paging', () => {
  it('nextCursor continues with the same filters and is null on the last page', async () => {
    const { h, token, add } = setup();
    const ids = Array.from({ length: 7 }, (_, i) => add({ recordedAt: 1000 - i, transcript: 'page me' }).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(h, token, { q: 'page', limit: 3, ...(cursor ? { cursor } : {}) });
      assert.equal(res.status, 200, res.text);
      seen.push(...res.json.recordings.map((r: { id: string }) => r.id));
      cursor = res.json.nextCursor;
      pages++;
    } while (cursor);
    assert.deepEqual(seen, ids);
    assert.equal(pages, 3);
    assert.equal((await list(h, token, { limit: 7 })).json.nextCursor, null, 'an exactly full last page has no next cursor');
  });

  it('a cursor is opaque and bound to its filters: other filters or garbage are 400; another limit is fine', async () => {
    const { h, token, add } = setup();
    for (let i = 0; i < 5; i++) add({ recordedAt: i, transcript: 'word' });
    const { nextCursor } = (await list(h, token, { q: 'word', limit: 2 })).json;
    assert.match(nextCursor, /^rc2\.[A-Za-z0-9_-]+$/);
    assert.doesNotMatch(nextCursor, /word/);
    assertError(await list(h, token, { q: 'words', cursor: nextCursor }), 400, 'invalid_request', 'other filters');
    assertError(await list(h, token, { cursor: nextCursor }), 400, 'invalid_request', 'cursor');
    assertError(await list(h, token, { q: 'word', type: 'clip', cursor: nextCursor }), 400, 'invalid_request', 'cursor');
    // One byte changed anywhere (the IV, the sealed position, the tag): not a cursor.
    const sealed = Buffer.from(nextCursor.slice(4), 'base64url');
    const flipped = [0, 20, sealed.length - 1].map((i) => {
      const b = Buffer.from(sealed);
      b[i] = b[i]! ^ 1;
      return `rc2.${b.toString('base64url')}`;
    });
    // The cursors of earlier versions held the position in the clear.
    const clear = 'rc1.' + Buffer.from('12.0123456789abcdef').toString('base64url');
    for (const junk of ['abc', 'rc2.', 'rc2.!!!', `${nextCursor}x`, nextCursor.slice(0, -1), clear, ...flipped]) {
      assertError(await list(h, token, { q: 'word', cursor: junk }), 400, 'invalid_request', 'cursor');
    }
    assert.equal((await list(h, token, { q: 'word', limit: 100, cursor: nextCursor })).json.recordings.length, 3);
    const again = (await list(h, token, { q: 'word', limit: 2 })).json.nextCursor;
    assert.notEqual(again, nextCursor, 'sealed afresh each time');
    assert.equal((await list(h, token, { q: 'word', limit: 100, cursor: again })).json.recordings.length, 3);
  });

  it("a cursor is the account's own: another account's is 400, and a search page that ends on another account's recording says nothing of it", async () => {
    const { h, token, add } = setup();
    const other = h.services.auth.createAccount('other');
    const otherToken = h.services.auth.createKey(other.id, { name: 'k', permissions: ['recordings:read', 'recordings:create'] }).secret;
    const otherApp = h.services.auth.authenticate(otherToken);
    for (let i = 0; i < 5; i++) add({ recordedAt: i, transcript: 'word' });
    for (let i = 0; i < 20; i++) h.services.recordings.create(otherApp, { type: 'clip', recordedAt: 1_000 + i, transcript: 'secretword' }, `o${i}`);
    const mine = (await list(h, token, { q: 'word', limit: 2 })).json.nextCursor;
    assertError(await list(h, otherToken, { q: 'word', limit: 2, cursor: mine }), 400, 'invalid_request', 'cursor');
    // Every candidate of a tiny budget is the other account's: an empty page, and a cursor that
    // holds no position in the clear and that the other account cannot use either.
    h.services.recordings.searchBudget = { candidates: 3, minCandidates: 0, ms: Infinity, probeRows: 64, now: () => 0 };
    const page = (await list(h, token, { q: 'secretword', limit: 10 })).json;
    assert.deepEqual(page.recordings, []);
    assert.match(page.nextCursor, /^rc2\./);
    const otherSeqs = h.services.core.db.prepare('SELECT seq FROM recordings WHERE account_id = ?').pluck().all(other.id) as number[];
    const bytes = Buffer.from(page.nextCursor.slice(4), 'base64url');
    for (const seq of otherSeqs) {
      const be = Buffer.alloc(8);
      be.writeBigInt64BE(BigInt(seq));
      assert.equal(bytes.includes(be), false);
      assert.equal(page.nextCursor.includes(String(seq)), false);
    }
    assertError(await list(h, otherToken, { q: 'secretword', limit: 10, cursor: page.nextCursor }), 400, 'invalid_request', 'cursor');
    // Followed to the end, it finds nothing of the other account's.
    let cursor: string | null = page.nextCursor;
    for (let n = 0; cursor !== null; n++) {
      assert.ok(n < 20, 'paging ended');
      const next: { recordings: unknown[]; nextCursor: string | null } = (await list(h, token, { q: 'secretword', limit: 10, cursor })).json;
      assert.deepEqual(next.recordings, []);
      cursor = next.nextCursor;
    }
  });

  it('paging reflects current data: no duplicates or gaps for recordings that exist through the walk', async () => {
    const { h, token, add } = setup();
    const ids = Array.from({ length: 6 }, (_, i) => add({ recordedAt: 100 - i }).id);
    const first = (await list(h, token, { limit: 2 })).json;
    add({ recordedAt: 200 }); // newer than the cursor: belongs to page one, not revisited
    const older = add({ recordedAt: 1 }); // older: shows up later
    const victim = h.services.recordings.get({ accountId: h.accountId }, ids[3]!);
    await remove(h, token, victim.id, '1');
    const rest = (await list(h, token, { limit: 100, cursor: first.nextCursor })).json.recordings.map((r: { id: string }) => r.id);
    assert.deepEqual([...first.recordings.map((r: { id: string }) => r.id), ...rest], [ids[0], ids[1], ids[2], ids[4], ids[5], older.id]);
  });

  it("a listing page's rows are read in the snapshot its sizes were: a row another connection commits between the two is on neither, and none is skipped", async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-list-snapshot-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'r.db');
    const h = harness({ db: file });
    const token = h.key();
    const app = h.services.auth.authenticate(h.key());
    const ids = Array.from({ length: 5 }, (_, i) => h.services.recordings.create(app, { type: 'clip', recordedAt: 100 - i }, `k${i}`).row.id);
    const other = openDatabase(file);
    t.after(() => other.close());
    // Right after the page's sizes are read, another connection commits a recording that sorts
    // between the first page's second and third rows (the key after the second's).
    const store = h.services.recordings.searchStore;
    const sizes = store.sizes.bind(store);
    let inserted = false;
    store.sizes = (q) => {
      const read = sizes(q);
      if (!inserted) {
        inserted = true;
        const columns = RECORDING_COLUMNS.join(', ');
        const copied = RECORDING_COLUMNS.map((c) => (c === 'id' ? `'rec_between'` : c === 'seq' ? 'seq + 1' : c === 'pos' ? 'pos - 1' : c)).join(', ');
        other.prepare(`INSERT INTO recordings (${columns}) SELECT ${copied} FROM recordings WHERE id = ?`).run(ids[1]);
      }
      return read;
    };
    const first = (await list(h, token, { limit: 3 })).json;
    assert.ok(inserted);
    assert.deepEqual(first.recordings.map((r: { id: string }) => r.id), ids.slice(0, 3), 'the rows the sizes were read for');
    const rest = (await list(h, token, { limit: 100, cursor: first.nextCursor })).json.recordings.map((r: { id: string }) => r.id);
    assert.deepEqual(rest, ids.slice(3), 'the cursor goes on after the third: none skipped');
    assert.deepEqual(
      (await list(h, token, { limit: 100 })).json.recordings.map((r: { id: string }) => r.id),
      [ids[0], ids[1], 'rec_between', ...ids.slice(2)],
      'the new row is listed from then on',
    );
  });
});

describe('query plans: a page costs its size', () => {
  const shapes = [
    { match: false },
    { match: false, type: true },
    { match: false, status: true },
    { match: false, deviceId: true },
    { match: false, source: true },
    { match: false, type: true, status: true, deviceId: true },
    { match: true },
  ];
  for (const shape of shapes) {
    const name = Object.entries(shape).filter(([, on]) => on).map(([k]) => k).join('+') || 'plain list';
    it(`${name}: read in seq order from an index, without a temp b-tree sort`, () => {
      const h = harness();
      // A plain listing reads the page's sizes first (sizesSql), then each row by its key.
      for (const sql of shape.match ? [RecordingSearchStore.CANDIDATES_SQL] : [RecordingSearchStore.sql(shape), RecordingSearchStore.sizesSql(shape)]) {
        const plan = (h.services.core.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({
          accountId: 'a', match: '"x"', type: 'clip', status: 'ready', deviceId: 'd', source: 's', lo: 0, hi: 10, limit: 5,
        }) as Array<{ detail: string }>).map((r) => r.detail);
        const text = plan.join(' | ');
        assert.doesNotMatch(text, /TEMP B-TREE/, text);
        if (shape.match) {
          assert.match(plan[0]!, /^SCAN recordings_fts VIRTUAL TABLE/, text);
          assert.match(text, /SEARCH r USING INTEGER PRIMARY KEY \(rowid=\?\)/, text);
        } else {
          assert.match(text, /^SEARCH recordings USING INDEX recordings_account\w* \(account_id=\?.*rowid>\? AND rowid<\?\)$/, text);
        }
      }
    });
  }

  it("a listed row is read by its key: one lookup of the table's integer primary key", () => {
    const h = harness();
    const plan = h.services.core.db.prepare(`EXPLAIN QUERY PLAN ${RecordingSearchStore.ROW_SQL}`).all(1, 'y') as Array<{ detail: string }>;
    assert.deepEqual(plan.map((r) => r.detail), ['SEARCH recordings USING INTEGER PRIMARY KEY (rowid=?)']);
  });

  it('get by id is one lookup in the unique id index', () => {
    const h = harness();
    const plan = h.services.core.db.prepare('EXPLAIN QUERY PLAN SELECT * FROM recordings WHERE id = ? AND account_id = ?').all('x', 'y') as Array<{ detail: string }>;
    assert.deepEqual(plan.map((r) => r.detail), ['SEARCH recordings USING INDEX sqlite_autoindex_recordings_1 (id=?)']);
  });
});
