// docs/decisions.md §17: which events each recording write emits, in the write's own transaction, and the
// change hook (RecordingService.onChange) the capture-rule engine builds on. Also the v1-facing
// pieces of the service: metadata-only pending captures, processing and audio reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RecordingRow } from '../../src/services/recording-model';
import { harness, type Harness } from '../helpers/harness';
import { withRing } from '../helpers/v1-client';
import { create, created, patch, remove } from '../helpers/recording-client';

const feed = (h: Harness) => h.services.events.feed(h.accountId, undefined, 1000).events.map((e) => `${e.type}@${e.revision}`);

describe('events per write', () => {
  it('create with a transcript: recording.created then recording.transcript_ready, both revision 1', async () => {
    const h = harness();
    await created(h, h.key(), { type: 'clip', transcript: 'hello' });
    assert.deepEqual(feed(h), ['recording.created@1', 'recording.transcript_ready@1']);
  });

  it('create without a transcript: recording.created only', async () => {
    const h = harness();
    await created(h, h.key(), { type: 'memo', title: 'untitled' });
    assert.deepEqual(feed(h), ['recording.created@1']);
  });

  it('an idempotent replay emits nothing', async () => {
    const h = harness();
    const token = h.key();
    await create(h, token, { type: 'clip', transcript: 'x' }, 'once');
    await create(h, token, { type: 'clip', transcript: 'x' }, 'once');
    assert.deepEqual(feed(h), ['recording.created@1', 'recording.transcript_ready@1']);
  });

  it('PATCH: recording.updated; plus transcript_ready when the transcript becomes or changes to nonempty text', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    await patch(h, token, rec.id, { title: 'named' }, '1');
    await patch(h, token, rec.id, { transcript: 'first words' }, '2');
    await patch(h, token, rec.id, { transcript: 'first words' }, '3'); // no change: nothing
    await patch(h, token, rec.id, { transcript: 'corrected words' }, '3');
    await patch(h, token, rec.id, { transcript: '' }, '4');
    await patch(h, token, rec.id, { pinned: true }, '5');
    assert.deepEqual(feed(h), [
      'recording.created@1',
      'recording.updated@2',
      'recording.updated@3', 'recording.transcript_ready@3',
      'recording.updated@4', 'recording.transcript_ready@4',
      'recording.updated@5',
      'recording.updated@6',
    ]);
  });

  it('DELETE: recording.deleted with the revision after the delete', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    await remove(h, token, rec.id, '1');
    assert.deepEqual(feed(h), ['recording.created@1', 'recording.deleted@2']);
  });

  it('the event is written in the same transaction: a failing event listener leaves no recording behind', async () => {
    const h = harness();
    h.services.events.onEvent(() => {
      throw new Error('outbox down');
    });
    const res = await create(h, h.key(), { type: 'clip', transcript: 'x' });
    assert.equal(res.status, 500);
    const n = h.services.core.db.prepare('SELECT count(*) AS n FROM recordings').get() as { n: number };
    assert.equal(n.n, 0);
    assert.deepEqual(feed(h), []);
  });
});

describe('onChange hook', () => {
  it('sees (null, row) on create, (before, after) on edits and delete, nothing for replays and no-op edits', async () => {
    const h = harness();
    const seen: Array<[number | null, number, boolean]> = [];
    h.services.recordings.onChange((before, after) => seen.push([before?.revision ?? null, after.revision, after.deleted_at !== null]));
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    await create(h, token, { type: 'clip' }, 'other-key');
    await patch(h, token, rec.id, {}, '1');
    await patch(h, token, rec.id, { title: 'x' }, '1');
    await remove(h, token, rec.id, '2');
    assert.deepEqual(seen, [[null, 1, false], [null, 1, false], [1, 2, false], [2, 3, true]]);
  });

  it('runs inside the transaction: throwing undoes the write', async () => {
    const h = harness();
    const token = h.key();
    const rec = await created(h, token, { type: 'clip' });
    h.services.recordings.onChange(() => {
      throw new Error('rule engine failed');
    });
    assert.equal((await patch(h, token, rec.id, { title: 'x' }, '1')).status, 500);
    assert.equal(h.services.recordings.get({ accountId: h.accountId }, rec.id).title, '');
  });
});

describe('metadata-only pending captures (v1 concept, modelled in the service)', () => {
  const setup = () => {
    // The capture metadata names a real device: the service checks it (capture-metadata.ts).
    const h = withRing();
    const app = h.services.auth.authenticate(h.session);
    return { h, app, svc: h.services.recordings };
  };

  it('a session create with deviceId or captureInput and no transcript is native, pending and not announced', () => {
    const { h, app, svc } = setup();
    const { row } = svc.create(app, { type: 'clip', deviceId: 'ring-1', captureInput: 'hold' }, 'cap-1');
    assert.deepEqual([row.native, row.text_saved, row.status], [1, 0, 'pending']);
    assert.deepEqual(feed(h), []);
    const withSource = svc.create(app, { type: 'clip', source: 'ring-app' }, 'cap-2').row;
    assert.deepEqual([withSource.native, withSource.text_saved], [0, 1], 'source alone is not a native capture');
    const viaKey = svc.create(h.services.auth.authenticate(h.key()), { type: 'clip', deviceId: 'ring-1' }, 'cap-3').row;
    assert.equal(viaKey.native, 0, 'an import through a key is not a native capture');
  });

  it('cannot be edited by others until the app saves it (409 not_editable); the first save emits recording.created', async () => {
    const { h, app, svc } = setup();
    const token = h.key();
    const { row } = svc.create(app, { type: 'clip', deviceId: 'ring-1', captureInput: 'hold' }, 'cap');
    const res = await patch(h, token, row.id, { title: 'x' }, '1');
    assert.equal(res.json?.error?.code, 'not_editable', res.text);
    const saved = svc.update(app, row.id, { transcript: 'remind me to call' }, 1);
    assert.deepEqual([saved.text_saved, saved.status, saved.revision], [1, 'ready', 2]);
    assert.deepEqual(feed(h), ['recording.created@2', 'recording.transcript_ready@2']);
    assert.equal((await patch(h, token, row.id, { title: 'now editable' }, '2')).status, 200);
    assert.deepEqual(feed(h).slice(2), ['recording.updated@3']);
  });

  it('processing reports: only the importing application, capture metadata fixed once set', () => {
    const { h, app, svc } = setup();
    const { row } = svc.create(app, { type: 'memo', transcript: 'x' }, 'p1');
    const other = h.services.auth.authenticate(h.key());
    assert.throws(() => svc.reportProcessing(other, row.id, { status: 'transcribing' }), { code: 'wrong_application' });
    h.clock.advance(5);
    const after = svc.reportProcessing(app, row.id, { status: 'ready', message: 'done', captureInput: 'appRecord' });
    assert.deepEqual([after.capture_input, after.native, after.processing_message, after.processing_updated_at, after.revision], ['appRecord', 1, 'done', h.clock.now(), 2]);
    assert.throws(() => svc.reportProcessing(app, row.id, { status: 'ready', captureInput: 'hold' }), { code: 'immutable_field' });
    assert.throws(() => svc.reportProcessing(app, row.id, { status: 'ready' }, 1), { code: 'precondition_failed' });
    assert.deepEqual(feed(h).slice(-1), ['recording.updated@2']);
  });

  it('audio reports: memos only, add and remove references with reportedAt', () => {
    const { app, svc } = setup();
    const memo = svc.create(app, { type: 'memo' }, 'a1').row;
    const clip = svc.create(app, { type: 'clip' }, 'a2').row;
    assert.throws(() => svc.reportAudio(app, clip.id, { clientId: 'c', fileId: 'f', available: true }), { code: 'not_editable' });
    assert.throws(() => svc.reportAudio(app, memo.id, { clientId: 'c', fileId: '/tmp/f', available: true }), { code: 'invalid_request' });
    let row: RecordingRow = svc.reportAudio(app, memo.id, { clientId: 'c', fileId: 'f', available: true });
    assert.deepEqual(JSON.parse(row.audio), [{ clientId: 'c', fileId: 'f', reportedAt: row.updated_at }]);
    row = svc.reportAudio(app, memo.id, { clientId: 'c', fileId: 'f', available: false });
    assert.equal(row.audio, '[]');
  });
});
