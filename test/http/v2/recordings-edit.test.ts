// GET, PATCH and DELETE /api/v2/recordings/{id}: ETag/If-Match (endpoint rule 6), immutable and
// unknown fields, deletion (docs/decisions.md §13), multi-account isolation, path id validation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../../helpers/harness';
import { assertError, create, created, get, patch, remove } from '../../helpers/recording-client';

describe('GET /recordings/{id}', () => {
  it('returns { recording } with ETag "<revision>"', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip', transcript: 'x' });
    await patch(h, token, rec.id, { pinned: true }, '"1"');
    const res = await get(h, token, rec.id);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('etag'), '"2"');
    assert.equal(res.json.recording.revision, 2);
  });

  it("another account's recording is 404, like an unknown id", async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip', transcript: 'mine' });
    const other = h.services.auth.createAccount('other');
    const theirs = h.services.auth.createKey(other.id, { name: 'k', permissions: ['recordings:read', 'recordings:write', 'recordings:delete'] }).secret;
    assertError(await get(h, theirs, rec.id), 404, 'not_found');
    assertError(await patch(h, theirs, rec.id, { title: 'x' }, '1'), 404, 'not_found');
    assertError(await remove(h, theirs, rec.id, '1'), 404, 'not_found');
    assertError(await get(h, theirs, 'rec_unknown'), 404, 'not_found');
  });

  it('a path id off the pattern or over 256 characters is 400', async () => {
    const h = harness();
    const token = h.key();
    for (const bad of ['-abc', '.x', 'a%20b', 'a'.repeat(257)]) assertError(await get(h, token, bad), 400, 'invalid_request', 'id');
    assertError(await get(h, token, 'a'.repeat(256)), 404, 'not_found');
  });

  it('recordings:create and recordings:write do not imply read', async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip' });
    assertError(await get(h, h.key(['recordings:create', 'recordings:write']), rec.id), 403, 'forbidden');
  });
});

describe('PATCH /recordings/{id}', () => {
  for (const ifMatch of ['"1"', 'W/"1"', '1']) {
    it(`If-Match ${ifMatch} is accepted`, async () => {
      const h = harness();
      const token = h.key();
      const rec = await created(h, token, { type: 'clip' });
      const res = await patch(h, token, rec.id, { title: 'new' }, ifMatch);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('etag'), '"2"');
    });
  }

  it('without If-Match gives 428, with a stale revision 412, with a malformed one 400', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    assertError(await patch(h, token, rec.id, { title: 'a' }), 428, 'precondition_required');
    assert.equal((await patch(h, token, rec.id, { title: 'a' }, '1')).status, 200);
    assertError(await patch(h, token, rec.id, { title: 'b' }, '1'), 412, 'precondition_failed');
    for (const bad of ['*', 'abc', '"1", "2"', '"x"', 'x'.repeat(101)]) assertError(await patch(h, token, rec.id, { title: 'b' }, bad), 400, 'invalid_request', 'If-Match');
  });

  it('edits title, transcript, summary and pinned; the revision goes up by one', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'memo', title: 't' });
    h.clock.advance(1000);
    const res = await patch(h, token, rec.id, { title: 'T', transcript: 'words', summary: '', pinned: true }, '"1"');
    assert.equal(res.status, 200, res.text);
    const r = res.json.recording;
    assert.deepEqual([r.title, r.transcript, r.summary, r.pinned, r.revision, r.updatedAt], ['T', 'words', '', true, 2, (rec.updatedAt as number) + 1000]);
    assert.equal(r.recordedAt, rec.recordedAt);
  });

  it('a nonempty transcript makes the recording ready', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    assert.equal(rec.status, 'pending');
    assert.equal((await patch(h, token, rec.id, { transcript: 'now it has words' }, '1')).json.recording.status, 'ready');
  });

  it('a PATCH that changes nothing keeps the revision and emits no event', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip', title: 'same', transcript: 'same' });
    const before = h.services.events.feed(h.accountId, undefined, 100).events.length;
    for (const body of [{}, { title: 'same' }, { transcript: 'same', pinned: false }]) {
      const res = await patch(h, token, rec.id, body, '"1"');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.recording.revision, 1);
      assert.equal(res.headers.get('etag'), '"1"');
    }
    assert.equal(h.services.events.feed(h.accountId, undefined, 100).events.length, before);
  });

  for (const [field, value] of [['type', 'memo'], ['audio', []], ['recordedAt', 1], ['externalId', 'x'], ['deviceId', 'ring-1']] as const) {
    it(`PATCH of ${field} gives 409 immutable_field`, async () => {
      const h = harness();
      const token = h.key();
      const rec = await created(h, token, { type: 'clip' });
      assertError(await patch(h, token, rec.id, { [field]: value }, '1'), 409, 'immutable_field', field);
    });
  }

  it('unknown fields and wrong types are 400', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    assertError(await patch(h, token, rec.id, { colour: 'red' }, '1'), 400, 'invalid_request', 'colour');
    assertError(await patch(h, token, rec.id, { status: 'ready' }, '1'), 400, 'invalid_request', 'status');
    assertError(await patch(h, token, rec.id, { title: null }, '1'), 400, 'invalid_request', 'title');
    assertError(await patch(h, token, rec.id, { pinned: 'yes' }, '1'), 400, 'invalid_request', 'pinned');
  });

  it('a caller without recordings:read gets only { id, revision }', async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip', transcript: 'owner text' });
    const res = await patch(h, h.key(['recordings:write']), rec.id, { pinned: true }, '1');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { recording: { id: rec.id, revision: 2 } });
  });

  it('needs recordings:write', async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip' });
    assertError(await patch(h, h.key(['recordings:read', 'recordings:create']), rec.id, { title: 'x' }, '1'), 403, 'forbidden');
  });
});

describe('DELETE /recordings/{id}', () => {
  it('answers 204; afterwards GET, PATCH, DELETE and a retried create answer 410', async () => {
    const h = harness();
    const token = h.key();
    const res = await create(h, token, { type: 'clip', transcript: 'bye' }, 'del-key');
    const id = res.json.recording.id;
    const del = await remove(h, token, id, '"1"');
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assertError(await get(h, token, id), 410, 'gone');
    assertError(await patch(h, token, id, { title: 'x' }, '2'), 410, 'gone');
    assertError(await remove(h, token, id, '2'), 410, 'gone');
    assertError(await create(h, token, { type: 'clip', transcript: 'bye' }, 'del-key'), 410, 'gone');
  });

  it('without If-Match gives 428 (404/410 for an unknown or deleted recording), with a stale one 412', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    assertError(await remove(h, token, rec.id), 428, 'precondition_required');
    await patch(h, token, rec.id, { title: 'x' }, '1');
    assertError(await remove(h, token, rec.id, '1'), 412, 'precondition_failed');
    assert.equal((await remove(h, token, rec.id, '2')).status, 204);
    // Once deleted (or never there), no If-Match could help: 410 / 404 come before 428.
    assertError(await remove(h, token, rec.id), 410, 'gone');
    assertError(await patch(h, token, rec.id, { title: 'y' }), 410, 'gone');
    assertError(await remove(h, token, 'rec_nope'), 404, 'not_found');
    assertError(await patch(h, token, 'rec_nope', { title: 'y' }), 404, 'not_found');
  });

  it('erases title, transcript, summary and audio from the table and the search index', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, {
      type: 'memo', title: 'Zanzibarish plans', transcript: 'quokkafeather secret', summary: 'hidden summary', audio: [{ clientId: 'c', fileId: 'f' }],
    });
    await remove(h, token, rec.id, '1');
    const { db } = h.services.core;
    const row = db.prepare('SELECT title, transcript, summary, audio, body_hash FROM recordings WHERE id = ?').get(rec.id);
    assert.deepEqual(row, { title: '', transcript: '', summary: '', audio: '[]', body_hash: '' });
    db.exec('CREATE VIRTUAL TABLE temp.rec_vocab USING fts5vocab(main, recordings_fts, row)');
    const terms = db.prepare("SELECT term FROM temp.rec_vocab WHERE term IN ('zanzibarish', 'quokkafeather', 'secret', 'plans')").all();
    assert.deepEqual(terms, [], 'the tokens are gone from the index itself (secure-delete), not only hidden');
    db.exec("INSERT INTO recordings_fts (recordings_fts, rank) VALUES ('integrity-check', 1)");
    assert.equal((await h.req('GET', '/api/v2/recordings?q=quokkafeather', { token })).json.recordings.length, 0);
  });

  it('needs recordings:delete', async () => {
    const h = harness();
    const rec = await created(h, h.key(), { type: 'clip' });
    assertError(await remove(h, h.key(['recordings:write', 'recordings:read']), rec.id, '1'), 403, 'forbidden');
  });
});
