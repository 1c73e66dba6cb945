// GET by id answers with the recording as SQLite writes it (RECORDING_ANSWER_SQL); lists, search,
// exports and writes answer with recordingJson() through JSON.stringify. Both must give the same
// bytes for every row this program writes: random rows with text of every kind (control
// characters, quotes, backslashes, U+2028, astral characters, lone surrogates, which reach SQLite
// as U+FFFD), with and without device and external ids, clips and memos with audio references.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RECORDING_STATUSES, recordingJson, type RecordingRow } from '../../src/services/recording-model';
import { harness } from '../helpers/harness';
import { prng } from '../helpers/prng';

const PIECES = ['"', '\\', '/', '\u2028', '\u2029', '\u007f', '\u0000', 'é', 'ß', '日本', '🎙️', '\ud83d', '\udc00', ' ', 'the ', '<', '&', "'"];

function text(r: () => number, max: number): string {
  const n = Math.floor(r() * max);
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.15) s += String.fromCharCode(Math.floor(r() * 32)); // C0 controls: \n, \t, \b, \u001f…
    else if (k < 0.45) s += PIECES[Math.floor(r() * PIECES.length)];
    else if (k < 0.55) s += String.fromCodePoint(0x80 + Math.floor(r() * 0x10f000)).replace(/[\ud800-\udfff]/, 'x');
    else s += String.fromCharCode(0x20 + Math.floor(r() * 95));
  }
  return s;
}

describe('the recording as SQLite writes it (RECORDING_ANSWER_SQL)', () => {
  it('is byte for byte JSON.stringify({ recording: recordingJson(row) }) for random rows', () => {
    const h = harness();
    const { store } = h.services.recordings;
    const r = prng(14);
    const ids: string[] = [];
    for (let i = 0; i < 400; i++) {
      const type = r() < 0.5 ? 'clip' : 'memo';
      const audio = Array.from({ length: Math.floor(r() * 3) }, () => ({ clientId: text(r, 12), fileId: text(r, 12), reportedAt: Math.floor(r() * 2 ** 43) }));
      const id = `rec_sql${i}`;
      const row: RecordingRow = {
        seq: 1000 + i,
        id,
        account_id: h.accountId,
        integration_id: 'app',
        type,
        title: text(r, 20),
        transcript: text(r, 200),
        summary: text(r, 30),
        recorded_at: Math.floor(r() * 2 ** 43),
        created_at: 1,
        updated_at: Math.floor(r() * 2 ** 43),
        revision: 1 + Math.floor(r() * 1000),
        status: RECORDING_STATUSES[Math.floor(r() * RECORDING_STATUSES.length)]!,
        pinned: r() < 0.5 ? 1 : 0,
        device_id: r() < 0.5 ? null : text(r, 16),
        external_id: r() < 0.5 ? null : `x${i}${text(r, 16)}`,
        source: null,
        capture_input: null,
        native: 0,
        text_saved: 1,
        processing_updated_at: null,
        processing_message: null,
        // A clip stored with references still shows none.
        audio: JSON.stringify(audio),
        body_hash: 'h',
        deleted_at: null,
      };
      store.insert(row);
      ids.push(id);
    }
    let withControls = 0;
    for (const id of ids) {
      const row = store.get(h.accountId, id)!;
      const answer = store.answer(h.accountId, id)!;
      assert.equal(answer.body, JSON.stringify({ recording: recordingJson(row) }), `row ${id}`);
      assert.equal(answer.revision, row.revision);
      assert.equal(answer.deleted_at, null);
      if (/[\u0000-\u001f]/.test(row.transcript)) withControls++;
    }
    assert.ok(withControls > 300, 'the rows hold control characters');
    assert.equal(store.answer(h.accountId, 'rec_none'), undefined);
    assert.equal(store.answer('acc_other', ids[0]!), undefined, "another account's recording is not found");
  });

  it('GET by id answers 404 and 410 as before, and the same recording as the listing', async () => {
    const h = harness();
    const token = h.key();
    const made = await h.req('POST', '/api/v2/recordings', {
      token,
      headers: { 'idempotency-key': 'k1' },
      body: { type: 'memo', title: 'Tab\there "quoted"', transcript: 'line\nbreak \\ back', externalId: 'e-1', audio: [{ clientId: 'c', fileId: 'f' }] },
    });
    assert.equal(made.status, 201, made.text);
    const { id } = (made.json as { recording: { id: string } }).recording;
    const one = await h.req('GET', `/api/v2/recordings/${id}`, { token });
    assert.equal(one.status, 200);
    assert.equal(one.headers.get('etag'), '"1"');
    const list = await h.req('GET', '/api/v2/recordings', { token });
    assert.deepEqual((one.json as { recording: unknown }).recording, (list.json as { recordings: unknown[] }).recordings[0]);
    assert.equal(one.text, JSON.stringify({ recording: (list.json as { recordings: unknown[] }).recordings[0] }));
    assert.equal((await h.req('GET', '/api/v2/recordings/rec_nothing', { token })).status, 404);
    assert.equal((await h.req('DELETE', `/api/v2/recordings/${id}`, { token, headers: { 'if-match': '"1"' } })).status, 204);
    const gone = await h.req('GET', `/api/v2/recordings/${id}`, { token });
    assert.equal(gone.status, 410);
    assert.equal((gone.json as { error: { code: string } }).error.code, 'gone');
  });
});
