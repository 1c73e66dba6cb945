// The capture-rule prefix (docs/decisions.md §12): compared case-insensitively after the transcript's
// leading whitespace and punctuation, ending at a word boundary; the command is the rest without
// its leading whitespace and punctuation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchPrefix } from '../src/services/text-payload';
import { v1Created, v1Put, withRing } from './helpers/v1-client';

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
