// The excerpt MCP listings show per recording: bounded, on one line, around the first matched word.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SNIPPET_CHARS, snippet } from '../../src/mcp/snippet';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('snippet', () => {
  it('a short text is the whole text, on one line', () => {
    assert.equal(snippet('  buy\nmilk\t and eggs '), 'buy milk and eggs');
    assert.equal(snippet(''), '');
  });

  it('a long text without a query is its start, cut at a space, with an ellipsis', () => {
    const s = snippet(filler(100));
    assert.ok(s.startsWith('word0 word1 '));
    assert.ok(s.endsWith('…'));
    assert.ok(s.length <= SNIPPET_CHARS, `bounded, ellipsis included: ${s.length}`);
    assert.match(s, /word\d+…$/, 'no word is cut in half');
  });

  it('with a query, the excerpt holds the first word the query matches as a prefix, case- and accent-insensitively', () => {
    const text = `${filler(60)} then the Café Meeting started ${filler(60)}`;
    for (const q of ['cafe', 'CAFÉ', 'meet', '"café meeting"']) {
      const s = snippet(text, q);
      assert.ok(s.includes('Café Meeting'), `${q}: ${s}`);
      assert.ok(s.startsWith('…') && s.endsWith('…'), s);
      assert.ok(s.length <= SNIPPET_CHARS, `bounded, ellipses included: ${s.length}`);
    }
  });

  it('a match near the end still fills the excerpt; no match falls back to the start', () => {
    const text = `${filler(80)} zebra`;
    const s = snippet(text, 'zebra');
    assert.ok(s.endsWith('zebra') && s.length > SNIPPET_CHARS - 20, s);
    assert.ok(snippet(text, 'giraffe').startsWith('word0 '));
  });

  it('a word inside another word is not a match (prefix of a word only)', () => {
    const text = `${filler(60)} homework ${filler(10)} work done ${filler(60)}`;
    const s = snippet(text, 'work');
    assert.ok(!s.includes('homework') || s.includes('work done'), s);
    assert.ok(s.includes('work done'), s);
  });

  it('never cuts an emoji (a surrogate pair) in half, and stays within SNIPPET_CHARS UTF-16 units with its ellipses', () => {
    const text = `${'😀'.repeat(300)} kangaroo ${'😀'.repeat(300)}`;
    for (const [s, what] of [
      [snippet(text, 'kangaroo'), 'search'],
      [snippet(text), 'list'],
    ] as const) {
      assert.ok(!LONE_SURROGATE.test(s), `${what}: half a character in ${JSON.stringify(s.slice(-3))}`);
      assert.ok(s.length <= SNIPPET_CHARS, `${what}: ${s.length} units`);
      assert.ok(s.endsWith('…'), s);
    }
    assert.ok(snippet(text, 'kangaroo').includes('kangaroo'));
    // Every offset of the pairs against the cuts, with and without spaces, matched or not.
    for (let shift = 0; shift < 4; shift++) {
      for (const unit of ['😀', '😀 ', '😀x', 'ab😀']) {
        const t = `${'a'.repeat(shift)}${unit.repeat(90)} kangaroo ${unit.repeat(90)}`;
        for (const q of [undefined, 'kangaroo', 'zebra', 'x']) {
          const s = snippet(t, q);
          assert.ok(!LONE_SURROGATE.test(s), `shift ${shift}, ${JSON.stringify(unit)}, ${q}: ${JSON.stringify(s)}`);
          assert.ok(s.length <= SNIPPET_CHARS, `shift ${shift}, ${JSON.stringify(unit)}, ${q}: ${s.length} units`);
          assert.ok(s.length >= SNIPPET_CHARS / 2, `still an excerpt: ${s.length} units`);
        }
      }
    }
  });
});
