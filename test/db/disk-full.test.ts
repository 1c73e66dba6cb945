// A write the storage refuses (disk full, read-only database, I/O error) answers 503 unavailable
// with Retry-After: 30, not 500 (docs/decisions.md §12); nothing is half-written and the same request with
// the same Idempotency-Key succeeds once space is back; reads keep working; the condition is
// logged once per episode and shown by /healthz. SQLite's own limits inject the errors in process:
// max_page_count makes the next page allocation fail with SQLITE_FULL, query_only makes every
// write fail with SQLITE_READONLY.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { writeFailureOf } from '../../src/db/write-health';
import { harness } from '../helpers/harness';
import { assertError, create, list } from '../helpers/recording-client';

function setup() {
  const h = harness();
  const token = h.key();
  const logged: string[] = [];
  h.services.core.writer.health.log = (line) => logged.push(line);
  const { db } = h.services.core;
  return {
    h,
    token,
    logged,
    fillDisk: () => db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`),
    freeDisk: () => db.pragma('max_page_count = 1073741823'),
  };
}

/** Big enough that the create needs new pages. */
const body = { type: 'memo', title: 'groceries', transcript: 'buy milk and eggs '.repeat(2_000) };

describe('a full disk or a read-only database', () => {
  it('a create on a full disk answers 503 with Retry-After: 30; the same request succeeds once space is back', async () => {
    const { h, token, fillDisk, freeDisk } = setup();
    await create(h, token, { type: 'clip', transcript: 'before' }, 'first');
    fillDisk();
    const refused = await create(h, token, body, 'same-key');
    assertError(refused, 503, 'unavailable', 'cannot write: the disk is full');
    assert.equal(refused.headers.get('retry-after'), '30');
    assert.deepEqual(h.errors, [], 'not reported as an internal error');
    freeDisk();
    const retried = await create(h, token, body, 'same-key');
    assert.equal(retried.status, 201, retried.text);
    const page = await list(h, token);
    assert.deepEqual(page.json.recordings.map((r: { title: string }) => r.title), ['groceries', ''], 'nothing half-written, nothing twice');
  });

  it('reads keep working while writes fail, key bookkeeping included', async () => {
    const { h, token, fillDisk } = setup();
    await create(h, token, { type: 'clip', transcript: 'kept' });
    const freshKey = h.key(['recordings:read']);
    fillDisk();
    h.services.core.db.pragma('query_only = 1'); // not one more page, not even the key's lastUsedAt
    h.clock.advance(24 * 3_600_000); // the key's lastUsedAt is due for a touch
    const page = await list(h, token);
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.recordings.length, 1);
    assert.equal((await list(h, freshKey)).status, 200, 'a key used for the first time');
  });

  it('a read-only database answers 503 too, and an edit or a delete as well as a create', async () => {
    const { h, token } = setup();
    const made = await create(h, token, { type: 'clip', transcript: 'x' });
    const id = made.json.recording.id;
    h.services.core.db.pragma('query_only = 1');
    assertError(await create(h, token, body), 503, 'unavailable', 'read-only');
    assertError(await h.req('PATCH', `/api/v2/recordings/${id}`, { token, body: { title: 't' }, headers: { 'if-match': '1' } }), 503, 'unavailable');
    assertError(await h.req('DELETE', `/api/v2/recordings/${id}`, { token, headers: { 'if-match': '1' } }), 503, 'unavailable');
    assertError(await h.req('POST', '/api/v1/recordings', { token, body: { kind: 'clip', transcript: 'v1' }, headers: { 'idempotency-key': 'v1k' } }), 503, 'unavailable');
  });

  it('logged once when writes start failing and once when they work again, not per request; /healthz says so meanwhile', async () => {
    const { h, token, logged, fillDisk, freeDisk } = setup();
    assert.deepEqual((await h.req('GET', '/healthz')).json, { status: 'ok' });
    fillDisk();
    for (let i = 0; i < 3; i++) assert.equal((await create(h, token, body)).status, 503);
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0]!, /writes are failing: the disk is full \(SQLITE_FULL\)/);
    const health = await h.req('GET', '/healthz');
    assert.equal(health.status, 200, 'liveness: the process is fine');
    assert.equal(health.json.status, 'ok');
    assert.equal(health.json.writes, 'failing');
    assert.equal(health.json.writeError, 'disk_full');
    freeDisk();
    assert.equal((await create(h, token, body)).status, 201);
    assert.equal(logged.length, 2);
    assert.match(logged[1]!, /writes work again/);
    assert.deepEqual((await h.req('GET', '/healthz')).json, { status: 'ok' });
  });

  it('the delivery scheduler backs off while writes fail instead of failing a claim every tick', async () => {
    const { h, fillDisk, freeDisk } = setup();
    const scheduler = h.services.webhooks.scheduler;
    await h.services.webhooks.create(h.accountId, { url: 'https://hooks.example/x', events: ['recording.updated'] });
    h.services.core.writer.write(() => h.services.events.emit(h.accountId, 'recording.updated', 'rec_1', 1, h.clock.now()));
    let claimWrites = 0;
    const write = h.services.core.writer.write.bind(h.services.core.writer);
    h.services.core.writer.write = ((fn: () => unknown) => (claimWrites++, write(fn))) as typeof write;
    fillDisk();
    h.services.core.db.pragma('query_only = 1');
    assert.equal(scheduler.tick(), 0);
    assert.equal(claimWrites, 1);
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1_000);
      scheduler.tick();
    }
    assert.equal(claimWrites, 1, 'no claim tried again within 30 s');
    h.clock.advance(25_000);
    scheduler.tick();
    assert.equal(claimWrites, 2, 'tried again after 30 s');
    h.services.core.db.pragma('query_only = 0');
    freeDisk();
    h.clock.advance(30_000);
    assert.equal(scheduler.tick(), 1, 'claims resume once writes work');
    await scheduler.drain();
  });

  it('SQLite codes: full, read-only and I/O errors (extended codes too) are storage failures; others are not', () => {
    assert.equal(writeFailureOf({ code: 'SQLITE_FULL' }), 'disk_full');
    assert.equal(writeFailureOf({ code: 'SQLITE_READONLY_DBMOVED' }), 'read_only');
    assert.equal(writeFailureOf({ code: 'SQLITE_IOERR_WRITE' }), 'io_error');
    assert.equal(writeFailureOf({ code: 'SQLITE_CONSTRAINT_UNIQUE' }), undefined);
    assert.equal(writeFailureOf(new Error('x')), undefined);
  });
});
