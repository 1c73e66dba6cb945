// v1 `processing: { status, updatedAt, message? }` (docs/decisions.md §7) after an edit that moves the
// status: saving a nonempty transcript makes the recording ready (spec "Recording status"), so the
// processing state changed then; its updatedAt follows and the earlier status's message goes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from './helpers/harness';
import { v1Created, v1Processing, v1Put } from './helpers/v1-client';

describe('v1 processing after an edit that makes the recording ready', () => {
  it('processing.updatedAt is the time of the change and the failed report message is gone', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', title: 'call' });
    h.clock.advance(1000);
    const failed = await v1Processing(h, key, r.id, { status: 'failed', message: 'no network' });
    assert.deepEqual(failed.json.recording.processing, { status: 'failed', updatedAt: h.clock.now(), message: 'no network' });
    h.clock.advance(1000);
    const saved = await v1Put(h, key, r.id, { transcript: 'typed by hand' }, failed.json.recording.revision);
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(saved.json.recording.processing, { status: 'ready', updatedAt: h.clock.now() });
  });

  it('an edit that keeps the status leaves processing as reported', async () => {
    const h = harness();
    const key = h.key();
    const r = await v1Created(h, key, { kind: 'memo', transcript: 'first' });
    const at = h.clock.now();
    h.clock.advance(1000);
    const saved = await v1Put(h, key, r.id, { title: 'renamed' }, 1);
    assert.deepEqual(saved.json.recording.processing, { status: 'ready', updatedAt: at });
  });
});
