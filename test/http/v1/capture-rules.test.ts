// Capture rules (spec "Capture rules", docs/decisions.md §6): conditions, one delivery per matching
// subscription, once per native capture made after the subscription, on the first nonempty
// transcript, waiting for late capture metadata, never for imports or later edits; the prefix
// condition and the command it leaves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchPrefix } from '../../../src/services/text-payload';
import { harness, type Harness } from '../../helpers/harness';
import { v1Created, v1Processing, v1Put, withRing } from '../../helpers/v1-client';

function setup() {
  const h = harness({ webhookAllow: '127.0.0.1' });
  h.services.devices.add(h.accountId, { id: 'ring-1', name: 'Ring', model: 'ring' });
  return h;
}

async function rule(h: Harness, rules: Record<string, string>): Promise<string> {
  const res = await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'http://127.0.0.1:9/hook', payloadMode: 'text', rules } });
  assert.equal(res.status, 200, res.text);
  return res.json.webhook.id;
}

interface RuleBody { id: string; type: string; eventId: string; revision: number; transcript: string; command?: string; kind: string }
const sent = (h: Harness, recordingId: string) =>
  h.services.webhooks.deliveries.forRecording(h.accountId, recordingId).map((d) => ({ webhookId: d.webhook_id, kind: d.kind, status: d.status, body: JSON.parse(d.body!) as RuleBody }));

const status = async (h: Harness, id: string) => (await h.req('GET', `/api/v1/recordings/${id}/deliveries`, { token: h.session })).json;

/** A ring capture by the app: pending, then its transcript saved. */
async function ringCapture(h: Harness, transcript: string, meta: Record<string, string> = { deviceId: 'ring-1', captureInput: 'hold' }) {
  const cap = await v1Created(h, h.session, { kind: 'clip', ...meta });
  await v1Put(h, h.session, cap.id, { transcript }, 1);
  return cap;
}

describe('capture rule conditions', () => {
  const cases: Array<[string, Record<string, string>, string, boolean]> = [
    ['prefix matches case-insensitively', { prefix: 'todo' }, 'TODO buy milk', true],
    ['prefix is anchored at the start', { prefix: 'todo' }, 'buy milk todo', false],
    ['whitespace before the first word is not the start (speech recognisers emit it)', { prefix: 'todo' }, ' \n Todo buy milk', true],
    ['a prefix configured with a leading space matches the same way', { prefix: ' todo' }, 'Todo buy milk', true],
    ['captureInput must match', { captureInput: 'doubleTap' }, 'Todo buy milk', false],
    ['captureInput matches', { captureInput: 'hold' }, 'anything', true],
    ['kind must match', { kind: 'memo' }, 'Todo buy milk', false],
    ['every configured condition must match', { prefix: 'Todo', captureInput: 'hold', kind: 'clip' }, 'todo  buy milk', true],
    ['one failing condition is enough to skip', { prefix: 'Todo', captureInput: 'hold', kind: 'memo' }, 'Todo buy milk', false],
  ];
  for (const [name, rules, transcript, fires] of cases) {
    it(`${name}: ${JSON.stringify(rules)} on "${transcript}" ${fires ? 'fires' : 'does not fire'}`, async () => {
      const h = setup();
      await rule(h, rules);
      const cap = await ringCapture(h, transcript);
      assert.equal(sent(h, cap.id).length, fires ? 1 : 0);
    });
  }

  it('command is the transcript without the matched prefix and the whitespace after it; transcript stays whole', async () => {
    const h = setup();
    await rule(h, { prefix: 'Todo:' });
    const cap = await ringCapture(h, 'TODO: \t buy milk  ');
    const [d] = sent(h, cap.id);
    assert.deepEqual([d!.body.command, d!.body.transcript], ['buy milk  ', 'TODO: \t buy milk  ']);
    const spoken = await ringCapture(h, ' Todo: call mum');
    const [e] = sent(h, spoken.id);
    assert.deepEqual([e!.body.command, e!.body.transcript], ['call mum', ' Todo: call mum']);
  });

  it('every matching subscription gets its own delivery', async () => {
    const h = setup();
    const a = await rule(h, { prefix: 'todo' });
    const b = await rule(h, { kind: 'clip' });
    await rule(h, { prefix: 'note' });
    const cap = await ringCapture(h, 'Todo buy milk');
    const got = sent(h, cap.id);
    assert.deepEqual(got.map((d) => d.webhookId).sort(), [a, b].sort());
    assert.notEqual(got[0]!.body.id, got[1]!.body.id);
    assert.deepEqual(got.map((d) => d.body.command).sort(), ['Todo buy milk', 'buy milk']);
  });
});

describe('when a capture rule fires', () => {
  it('on the first nonempty transcript: the snapshot is that revision, eventId its transcript_ready event, type recording.transcript_ready', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    assert.deepEqual((await status(h, cap.id)).pendingCaptureEvaluations.map((e: { status: string }) => e.status), ['pending_transcription']);
    await v1Processing(h, h.session, cap.id, { status: 'transcribing' });
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 2);
    const event = h.services.events.feed(h.accountId, undefined, 10).events.find((e) => e.type === 'recording.transcript_ready')!;
    const [d] = sent(h, cap.id);
    assert.deepEqual([d!.kind, d!.status, d!.body.type, d!.body.revision, d!.body.eventId], ['rule', 'queued', 'recording.transcript_ready', 3, event.id]);
    const listing = await status(h, cap.id);
    assert.deepEqual(listing.pendingCaptureEvaluations, []);
    assert.deepEqual(listing.deliveries.map((x: { type: string; trigger: string; status: string }) => [x.type, x.trigger, x.status]), [['recording.transcript_ready', 'rule', 'queued']]);
  });

  it('once per subscription and capture: later edits never fire again', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const cap = await ringCapture(h, 'Todo buy milk');
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy oat milk' }, 2);
    await v1Put(h, h.session, cap.id, { transcript: '' }, 3);
    await v1Put(h, h.session, cap.id, { transcript: 'Todo again' }, 4);
    assert.equal(sent(h, cap.id).length, 1);
  });

  it('a first transcript that does not match ends the evaluation: a later matching edit does not fire', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const cap = await ringCapture(h, 'buy milk');
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 2);
    assert.equal(sent(h, cap.id).length, 0);
    assert.deepEqual((await status(h, cap.id)).pendingCaptureEvaluations, []);
  });

  it('API-key imports and session imports without capture metadata never fire', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const viaKey = await v1Created(h, h.key(), { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', transcript: 'Todo buy milk' });
    const viaSession = await v1Created(h, h.session, { kind: 'clip', transcript: 'Todo buy milk', source: 'ring-app' });
    assert.equal(sent(h, viaKey.id).length + sent(h, viaSession.id).length, 0);
  });

  it('a session recording that gets capture metadata before any transcript is admitted then and fires on its transcript', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo', captureInput: 'hold' });
    const r = await v1Created(h, h.session, { kind: 'clip' });
    assert.equal((await v1Processing(h, h.session, r.id, { status: 'transcribing', deviceId: 'ring-1', captureInput: 'hold' })).status, 200);
    assert.deepEqual((await status(h, r.id)).pendingCaptureEvaluations.map((e: { status: string }) => e.status), ['pending_transcription']);
    await v1Put(h, h.session, r.id, { transcript: 'Todo water plants' }, 2);
    assert.deepEqual(sent(h, r.id).map((d) => d.body.command), ['water plants']);
  });

  it('imported text stays an import: capture metadata reported after a session import does not fire', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const r = await v1Created(h, h.session, { kind: 'clip', transcript: 'Todo imported' });
    await v1Processing(h, h.session, r.id, { status: 'ready', deviceId: 'ring-1', captureInput: 'hold' });
    assert.equal(sent(h, r.id).length, 0);
    assert.deepEqual((await status(h, r.id)).pendingCaptureEvaluations, []);
  });

  it('counts only captures made after the subscription', async () => {
    const h = setup();
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    h.clock.advance(1);
    await rule(h, { prefix: 'todo' });
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 1);
    assert.equal(sent(h, cap.id).length, 0);
  });

  it('a native capture created with its text fires at once', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold', transcript: 'todo call Ann' });
    assert.deepEqual(sent(h, cap.id).map((d) => [d.body.revision, d.body.command]), [[1, 'call Ann']]);
  });

  it('a disabled subscription gets nothing and its evaluations are not listed', async () => {
    const h = setup();
    const id = await rule(h, { prefix: 'todo' });
    const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
    await h.req('DELETE', `/api/v2/webhooks/${id}`, { token: h.session });
    assert.deepEqual((await status(h, cap.id)).pendingCaptureEvaluations, []);
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy milk' }, 1);
    assert.equal(sent(h, cap.id).length, 0);
  });
});

describe('capture input conditions wait for authoritative capture metadata', () => {
  it('even when it arrives after the transcript: waiting_for_capture_input, then queued with the snapshot of the transcript revision', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo', captureInput: 'hold' });
    const cap = await ringCapture(h, 'Todo buy milk', { deviceId: 'ring-1' });
    assert.equal(sent(h, cap.id).length, 0);
    const waiting = (await status(h, cap.id)).pendingCaptureEvaluations;
    assert.deepEqual(waiting.map((e: { status: string; revision: number }) => [e.status, e.revision]), [['waiting_for_capture_input', 2]]);
    await v1Put(h, h.session, cap.id, { transcript: 'Todo buy oat milk' }, 2);
    const late = await v1Processing(h, h.session, cap.id, { status: 'ready', captureInput: 'hold' });
    assert.equal(late.status, 200, late.text);
    const [d] = sent(h, cap.id);
    assert.deepEqual([d!.status, d!.body.revision, d!.body.transcript, d!.body.command, d!.body.eventId], ['queued', 2, 'Todo buy milk', 'buy milk', waiting[0].eventId]);
    assert.deepEqual((await status(h, cap.id)).pendingCaptureEvaluations, []);
  });

  it('metadata naming another input ends the wait without a delivery', async () => {
    const h = setup();
    await rule(h, { captureInput: 'hold' });
    const cap = await ringCapture(h, 'hello', { deviceId: 'ring-1' });
    await v1Processing(h, h.session, cap.id, { status: 'ready', captureInput: 'doubleTap' });
    assert.equal(sent(h, cap.id).length, 0);
    assert.deepEqual((await status(h, cap.id)).pendingCaptureEvaluations, []);
  });

  it('a rule without a captureInput condition does not wait for it', async () => {
    const h = setup();
    await rule(h, { prefix: 'todo' });
    const cap = await ringCapture(h, 'todo x', { deviceId: 'ring-1' });
    assert.equal(sent(h, cap.id).length, 1);
  });
});

// The capture-rule prefix (docs/decisions.md §12): compared case-insensitively after the transcript's
// leading whitespace and punctuation, ending at a word boundary; the command is the rest without
// its leading whitespace and punctuation.
describe('capture-rule prefix at a word boundary, after leading whitespace and punctuation', () => {
  // [rule prefix, transcript, command or null when the rule does not fire]
  const table: Array<[string, string, string | null]> = [
    ['todo', 'Todo, buy apples.', 'buy apples.'],
    ['todo', ' todo: eggs', 'eggs'],
    ['todo', 'todos are done', null],
    ['todo', 'TODO buy milk', 'buy milk'],
    ['todo', 'todo', ''],
    ['todo', '"Todo" - call mum', 'call mum'],
    ['todo', '¿todo? sí', 'sí'],
    ['todo', '... todo… fix the bike', 'fix the bike'],
    ['todo', 'todo2 things', null],
    ['todo', 'todoé', null],
    ['todo', 'todo\u0301 accent', null],
    ['todo', 'todo日本', null],
    ['todo', 'buy milk todo', null],
    ['todo', 'to do buy milk', null],
    ['Todo:', 'TODO: \t buy milk  ', 'buy milk  '],
    ['todo:', 'todo:buy', 'buy'],
    [' todo', 'Todo buy milk', 'buy milk'],
    ['#todo', 'todo buy milk', 'buy milk'],
    ['#', '# heading', 'heading'],
    ['#', 'heading', null],
    ['café', 'CAFÉ, au lait', 'au lait'],
    ['note to self', 'Note to self: water plants', 'water plants'],
    // One Unicode form (NFC) on both sides; invisible format characters at the start are skipped.
    ['Café', 'Cafe\u0301 au lait', 'au lait'],
    ['cafe\u0301', 'CAFÉ, au lait', 'au lait'],
    ['מטלה', '\u200fמטלה לקנות חלב', 'לקנות חלב'],
    ['todo', '\u200btodo buy', 'buy'],
    ['todo', '\u2067todo buy\u2069', 'buy\u2069'],
    // The command is cut from the transcript as written (not its NFC form), and U+0600 (the Arabic
    // number sign, a format character) is no invisible mark: it stays with its number.
    ['todo', 'Todo, Cafe\u0301 au lait', 'Cafe\u0301 au lait'],
    ['todo', 'todo \u06005', '\u06005'],
    // What the README says a rule does not do.
    ['todo', 'Todo.', ''],
    ['ok google', 'OK, Google, milk', null],
    ['todo', "todo's list", 's list'],
    ['🛒', '🛒milk', 'milk'],
  ];
  for (const [prefix, transcript, command] of table) {
    it(`prefix ${JSON.stringify(prefix)} on ${JSON.stringify(transcript)} ${command === null ? 'does not fire' : `fires with command ${JSON.stringify(command)}`}`, () => {
      assert.equal(matchPrefix(transcript, prefix), command);
    });
  }

  it('a native capture saying "Todo, buy apples." fires a todo rule with command "buy apples."; "todos are done" does not fire', async () => {
    const h = withRing();
    const hook = await h.req('POST', '/api/v1/webhooks', { token: h.session, body: { url: 'https://93.184.216.34/todo', payloadMode: 'text', rules: { prefix: 'todo' } } });
    assert.equal(hook.status, 200, hook.text);
    const say = async (transcript: string) => {
      const cap = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'hold' });
      assert.equal((await v1Put(h, h.session, cap.id, { transcript }, 1)).status, 200);
      return h.services.webhooks.deliveries.forRecording(h.accountId, cap.id).map((d) => JSON.parse(d.body!).command as string);
    };
    assert.deepEqual(await say('Todo, buy apples.'), ['buy apples.']);
    assert.deepEqual(await say('todos are done'), []);
  });
});
