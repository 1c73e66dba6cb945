// docs/decisions.md §17, §5 and §7: the v2 feed (opaque cursor, nextCursor never null)
// and the v1 feed (integer cursor, hasMore), both account-scoped and both the same events.
// Events are emitted directly inside a writer transaction, as the recording service does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventType } from '../../src/services/events';
import { harness, type TestResponse } from '../helpers/harness';

type H = ReturnType<typeof harness>;

function emit(h: H, n: number, accountId = h.accountId, type: EventType = 'recording.updated'): void {
  for (let i = 0; i < n; i++) {
    h.services.core.writer.write(() => h.services.events.emit(accountId, type, `rec_${i}`, i + 1, h.services.core.clock.now()));
    h.clock.advance(1);
  }
}

function assertError(res: TestResponse, status: number, code: string, mentions?: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.error?.code, code, res.text);
  if (mentions) assert.match(res.json.error.message, new RegExp(mentions), res.text);
}

const v2 = (h: H, query = '', token = h.session) => h.req('GET', `/api/v2/events${query}`, { token });
const v1 = (h: H, query = '', token = h.session) => h.req('GET', `/api/v1/events${query}`, { token });
const ids = (res: TestResponse): string[] => res.json.events.map((e: { id: string }) => e.id);

describe('v2 GET /events', () => {
  it('events have exactly the default-payload fields: id, type, recordingId, revision, createdAt', async () => {
    const h = harness();
    h.services.core.writer.write(() => h.services.events.emit(h.accountId, 'recording.created', 'rec_a', 1, h.clock.now()));
    const res = await v2(h, '', h.key(['events:read']));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.events, [{ id: res.json.events[0].id, type: 'recording.created', recordingId: 'rec_a', revision: 1, createdAt: h.clock.now() }]);
    assert.match(res.json.events[0].id, /^\d+$/);
  });

  it('needs events:read', async () => {
    const h = harness();
    assertError(await v2(h, '', h.key(['recordings:read'])), 403, 'forbidden');
  });

  it('without a cursor it starts at the first event, oldest first, 100 per page by default', async () => {
    const h = harness();
    emit(h, 150);
    const res = await v2(h);
    assert.equal(res.json.events.length, 100);
    const seqs = ids(res).map(Number);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
    assert.equal(res.json.events[0].recordingId, 'rec_0');
  });

  it('walking nextCursor returns every event once, in order; ids are monotonic', async () => {
    const h = harness();
    emit(h, 25);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await v2(h, `?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(typeof res.json.nextCursor, 'string');
      cursor = res.json.nextCursor;
      if (res.json.events.length === 0) break;
      seen.push(...ids(res));
    }
    assert.equal(seen.length, 25);
    assert.equal(new Set(seen).size, 25);
    assert.ok(seen.every((id, i) => i === 0 || Number(id) > Number(seen[i - 1])));
  });

  it('nextCursor is never null: an empty page returns the cursor sent, or a start cursor without one', async () => {
    const h = harness();
    const empty = await v2(h);
    assert.deepEqual(empty.json.events, []);
    assert.equal(typeof empty.json.nextCursor, 'string');
    // The start cursor, saved before any event, later yields the first events.
    emit(h, 2);
    const next = await v2(h, `?cursor=${encodeURIComponent(empty.json.nextCursor)}`);
    assert.equal(next.json.events.length, 2);
    const caughtUp = await v2(h, `?cursor=${encodeURIComponent(next.json.nextCursor)}`);
    assert.deepEqual(caughtUp.json.events, []);
    assert.equal(caughtUp.json.nextCursor, next.json.nextCursor);
  });

  it('events after a saved cursor appear on the next poll', async () => {
    const h = harness();
    emit(h, 3);
    const first = await v2(h);
    emit(h, 2);
    const later = await v2(h, `?cursor=${encodeURIComponent(first.json.nextCursor)}`);
    assert.equal(later.json.events.length, 2);
    assert.ok(Number(later.json.events[0].id) > Number(first.json.events[2].id));
  });

  it('limit must be 1-1000', async () => {
    const h = harness();
    emit(h, 3);
    assert.equal((await v2(h, '?limit=1')).json.events.length, 1);
    assert.equal((await v2(h, '?limit=1000')).status, 200);
    for (const bad of ['0', '1001', '-1', 'abc', '', '1.5']) assertError(await v2(h, `?limit=${bad}`), 400, 'invalid_request', 'query.limit');
  });

  it('a cursor that is not ours gives 400', async () => {
    const h = harness();
    emit(h, 2);
    const good: string = (await v2(h, '?limit=1')).json.nextCursor;
    const otherVersion = good.replace(/^evc1\./, 'evc9.');
    const notASeq = 'evc1.' + Buffer.from('seq:-1').toString('base64url');
    for (const bad of ['garbage', '5', otherVersion, notASeq, good + '%%', 'evc1.', 'x'.repeat(300), '']) {
      assertError(await v2(h, `?cursor=${encodeURIComponent(bad)}`), 400, 'invalid_request', 'cursor');
    }
  });

  it('a cursor past the newest event (kept from before a restore) gives 400 saying so; the cursor of the newest event is caught up', async () => {
    const h = harness();
    emit(h, 2);
    const newest = h.services.events.store.lastSeq();
    const past = 'evc1.' + Buffer.from(`seq:${newest + 6}`).toString('base64url');
    const res = await v2(h, `?cursor=${past}`);
    assertError(res, 400, 'invalid_request', `^cursor: .* is after the newest event \\(${newest}\\): was the database restored from a backup\\?`);
    const caughtUp: string = (await v2(h)).json.nextCursor;
    assert.deepEqual((await v2(h, `?cursor=${caughtUp}`)).json, { events: [], nextCursor: caughtUp });
  });

  it("another account's events never appear", async () => {
    const h = harness();
    const other = h.services.auth.createAccount('other');
    emit(h, 2, other.id);
    emit(h, 1);
    emit(h, 2, other.id);
    const res = await v2(h);
    assert.deepEqual(res.json.events.map((e: { recordingId: string }) => e.recordingId), ['rec_0']);
    const after = await v2(h, `?cursor=${encodeURIComponent(res.json.nextCursor)}`);
    assert.deepEqual(after.json.events, []);
  });
});

describe('v1 GET /events', () => {
  it('returns 200 { events, cursor (integer), hasMore } with the same events as v2', async () => {
    const h = harness();
    emit(h, 3);
    const res = await v1(h, '', h.key(['events:read']));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['cursor', 'events', 'hasMore']);
    assert.equal(Number.isInteger(res.json.cursor), true);
    assert.equal(res.json.hasMore, false);
    assert.deepEqual(res.json.events, (await v2(h)).json.events);
    assert.equal(res.json.cursor, Number(res.json.events[2].id));
  });

  it('needs events:read', async () => {
    const h = harness();
    assertError(await v1(h, '', h.key(['settings:read'])), 403, 'forbidden');
  });

  it('after=<cursor> returns the events after it; hasMore tells whether a page remains', async () => {
    const h = harness();
    emit(h, 5);
    const p1 = await v1(h, '?after=0&limit=2');
    assert.equal(p1.json.events.length, 2);
    assert.equal(p1.json.hasMore, true);
    const p2 = await v1(h, `?after=${p1.json.cursor}&limit=2`);
    const p3 = await v1(h, `?after=${p2.json.cursor}&limit=2`);
    assert.equal(p3.json.events.length, 1);
    assert.equal(p3.json.hasMore, false);
    assert.deepEqual([...ids(p1), ...ids(p2), ...ids(p3)], ids(await v2(h)));
    const done = await v1(h, `?after=${p3.json.cursor}`);
    assert.deepEqual(done.json, { events: [], cursor: p3.json.cursor, hasMore: false });
  });

  it('limit=0 returns no events, keeps the cursor and reports hasMore', async () => {
    const h = harness();
    emit(h, 1);
    assert.deepEqual((await v1(h, '?after=0&limit=0')).json, { events: [], cursor: 0, hasMore: true });
  });

  it('defaults: after 0 and limit 100; a larger limit is served as 1000 with hasMore', async () => {
    const h = harness();
    emit(h, 1001);
    const def = await v1(h);
    assert.equal(def.json.events.length, 100);
    const big = await v1(h, '?limit=5000');
    assert.equal(big.json.events.length, 1000);
    assert.equal(big.json.hasMore, true);
  });

  it('after and limit must be integers >= 0', async () => {
    const h = harness();
    for (const [q, field] of [['after=-1', 'after'], ['after=abc', 'after'], ['after=', 'after'], ['after=1.5', 'after'], ['limit=-1', 'limit'], ['limit=x', 'limit']]) {
      assertError(await v1(h, `?${q}`), 400, 'invalid_request', `query.${field}`);
    }
  });

  it('an after past the newest event (kept from before a restore) gives 400 saying so; after=<the newest> is caught up', async () => {
    const h = harness();
    emit(h, 2);
    const newest = h.services.events.store.lastSeq();
    assertError(await v1(h, `?after=${newest + 6}`), 400, 'invalid_request', `^after=${newest + 6} is after the newest event \\(${newest}\\): was the database restored`);
    assertError(await v1(h, `?after=${newest + 1}&limit=0`), 400, 'invalid_request', 'after the newest event');
    assert.deepEqual((await v1(h, `?after=${newest}`)).json, { events: [], cursor: newest, hasMore: false });
  });

  it("another account's events never appear", async () => {
    const h = harness();
    const other = h.services.auth.createAccount('other');
    emit(h, 3, other.id);
    emit(h, 1);
    const res = await v1(h);
    assert.deepEqual(res.json.events.map((e: { recordingId: string }) => e.recordingId), ['rec_0']);
    assert.equal(res.json.hasMore, false);
  });
});
