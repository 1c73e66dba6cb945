// Ids (src/ids.ts): random ids from a pooled buffer are distinct and match the id pattern;
// recording ids are time-ordered, so their unique index grows at its right edge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTimeOrderedId, randomBase62 } from '../src/ids';
import { harness } from './helpers/harness';

describe('ids', () => {
  it('ids from the pooled random bytes are distinct and match the id pattern', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) seen.add(randomBase62(20));
    assert.equal(seen.size, 10_000);
    for (const id of seen) assert.match(id, /^[0-9A-Za-z]{20}$/);
  });

  it('recording ids are time-ordered: same shape as other ids, later ones sort after earlier ones, unique within a millisecond', () => {
    const ids = [0, 1, 61, 62, 1_700_000_000_000, 1_700_000_000_001, 1_767_225_600_000, 62 ** 8 - 1].map((t) => newTimeOrderedId('rec', t));
    for (const id of ids) assert.match(id, /^rec_[0-9A-Za-z]{20}$/);
    assert.deepEqual([...ids].sort(), ids, 'string order is time order');
    const sameMs = new Set(Array.from({ length: 10_000 }, () => newTimeOrderedId('rec', 1_767_225_600_000)));
    assert.equal(sameMs.size, 10_000);
    assert.ok([...sameMs].every((id) => id.startsWith(ids[6]!.slice(0, 12))), 'the first 8 characters after rec_ are the time');
  });

  it('a created recording gets a time-ordered id', async () => {
    const h = harness();
    const token = h.key();
    h.clock.set(1_767_225_600_000);
    const first = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip' }, headers: { 'idempotency-key': 'a' } });
    h.clock.advance(1);
    const second = await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip' }, headers: { 'idempotency-key': 'b' } });
    assert.equal((first.json.recording.id as string).slice(0, 12), newTimeOrderedId('rec', 1_767_225_600_000).slice(0, 12));
    assert.ok((second.json.recording.id as string) > (first.json.recording.id as string));
  });
});
