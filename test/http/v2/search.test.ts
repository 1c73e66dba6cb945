// GET /api/v2/recordings search text (endpoint rule 7, docs/decisions.md §5 "q"): AND of words, prefix
// matching, case and accents, phrases, FTS syntax as plain text, limits, and a cost bounded by the
// distinct conditions of q.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../../src/permissions';
import { matchExpression } from '../../../src/services/recording-search';
import { harness } from '../../helpers/harness';
import { assertError, created, list, searchIds } from '../../helpers/recording-client';

async function library(texts: Array<{ title?: string; transcript?: string; summary?: string }>) {
  const h = harness();
  const token = h.key();
  const ids: string[] = [];
  for (const t of texts) {
    h.clock.advance(1000);
    ids.push((await created(h, token, { type: 'memo', ...t })).id);
  }
  return { h, token, ids, find: async (q: string) => (await searchIds(h, token, { q, limit: 100 })).sort() };
}

const sorted = (...ids: Array<string | undefined>) => ids.map(String).sort();

describe('search text q', () => {
  it('every word must appear, in the title or the transcript (not the summary)', async () => {
    const { find, ids } = await library([
      { title: 'Budget', transcript: 'review on friday' },
      { title: 'Budget only' },
      { transcript: 'review only' },
      { summary: 'budget review' },
    ]);
    assert.deepEqual(await find('budget review'), sorted(ids[0]));
    assert.deepEqual(await find('budget'), sorted(ids[0], ids[1]));
  });

  it('a word matches longer words it starts: "meet" finds "meeting"', async () => {
    const { find, ids } = await library([{ transcript: 'team meeting at noon' }, { transcript: 'meet the client' }, { transcript: 'helmet' }]);
    assert.deepEqual(await find('meet'), sorted(ids[0], ids[1]));
    assert.deepEqual(await find('meeting'), sorted(ids[0]));
    assert.deepEqual(await find('mee'), sorted(ids[0], ids[1]), 'a three-letter prefix');
    assert.deepEqual(await find('me'), sorted(ids[0], ids[1]), 'a two-letter prefix');
  });

  it('is case- and accent-insensitive both ways', async () => {
    const { find, ids } = await library([{ title: 'Café CRÈME' }, { transcript: 'my resume' }, { transcript: 'naïve Zürich' }]);
    assert.deepEqual(await find('cafe'), sorted(ids[0]));
    assert.deepEqual(await find('CAFÉ creme'), sorted(ids[0]));
    assert.deepEqual(await find('caf'), sorted(ids[0]));
    assert.deepEqual(await find('résumé'), sorted(ids[1]));
    assert.deepEqual(await find('naive zur'), sorted(ids[2]));
  });

  it('"double quotes" make an exact phrase', async () => {
    const { find, ids } = await library([{ transcript: 'the budget review is due' }, { transcript: 'review the budget' }]);
    assert.deepEqual(await find('"budget review"'), sorted(ids[0]));
    assert.deepEqual(await find('"review the" budget'), sorted(ids[1]));
    assert.deepEqual(await find('"budget rev"'), [], 'words in a phrase are whole words');
  });

  it('FTS5 syntax in q is plain text', async () => {
    const { find, ids } = await library([{ transcript: 'do not forget' }, { transcript: 'near the title page' }, { transcript: 'forget it' }]);
    assert.deepEqual(await find('NOT'), sorted(ids[0]));
    assert.deepEqual(await find('forget NOT'), sorted(ids[0]));
    assert.deepEqual(await find('NEAR(title page)'), sorted(ids[1]));
    assert.deepEqual(await find('title:page'), sorted(ids[1]));
    assert.deepEqual(await find('forget OR near'), []);
    assert.deepEqual(await find('-forget +it'), sorted(ids[2]));
    const empty = await library([]);
    for (const q of ['"', '""', '"unbalanced phrase', '*', 'a*', '^forget', '(', ')', '{title}: x', 'AND', 'x"y"z', "'", '\\', '%', '\u0000']) {
      const res = await list(empty.h, empty.token, { q });
      assert.equal(res.status, 200, `${JSON.stringify(q)}: ${res.text}`);
    }
  });

  it('q without any word (only punctuation) sets no condition', async () => {
    const { find, ids } = await library([{ transcript: 'a' }, { title: 'b' }]);
    assert.deepEqual(await find('?!'), sorted(...ids));
  });

  it('a one-character word a-z or 0-9 matches only itself', async () => {
    const { find, ids } = await library([{ transcript: 'plan a trip' }, { transcript: 'apples' }, { transcript: 'in 3 days' }]);
    assert.deepEqual(await find('a'), sorted(ids[0]));
    assert.deepEqual(await find('3'), sorted(ids[2]));
  });

  it('a word no recording has gives an empty page', async () => {
    const { find } = await library([{ transcript: 'something' }]);
    assert.deepEqual(await find('zyxwvut'), []);
  });

  it('q is 1-200 characters', async () => {
    const { h, token } = await library([]);
    assertError(await list(h, token, { q: 'x'.repeat(201) }), 400, 'invalid_request', 'q');
    assertError(await list(h, token, { q: '' }), 400, 'invalid_request', 'q');
    assert.equal((await list(h, token, { q: 'x'.repeat(200) })).status, 200);
  });
});

describe('prefix expansion', () => {
  const terms = (forms: string[]) => ({
    expansions: (p: string, limit: number) => forms.filter((f) => f.startsWith(p)).slice(0, limit),
  });

  it('a word becomes an OR of the whole words it starts, whatever its length (the index has no prefix index)', () => {
    assert.equal(matchExpression('meet', terms(['meet', 'meeting', 'mouse'])), '("meet" OR "meeting")');
    assert.equal(matchExpression('mee', terms(['meet', 'meeting', 'mouse'])), '("meet" OR "meeting")', 'three characters');
    assert.equal(matchExpression('me', terms(['me', 'meet', 'mouse'])), '("me" OR "meet")', 'two characters');
    assert.equal(matchExpression('mee', terms([])), null, 'no stored form: nothing can match');
    assert.equal(matchExpression('Café', terms(['cafe', 'café', 'cafeteria'])), '("cafe" OR "cafeteria")', 'accents folded first (FTS5 folds "café" to "cafe" too)');
    assert.equal(matchExpression('straße', terms([])), '"straße"*', 'other non-ASCII words: FTS5 prefix query');
    assert.equal(matchExpression('"a b" c', terms([])), '"a b" AND "c"');
    assert.equal(matchExpression('meet nothing', terms(['meet'])), null, 'a word without any form: nothing can match');
    assert.equal(matchExpression('!!', terms([])), '');
  });

  it('a word with more than 48 forms is tested on the text of the rows read, and still finds every match', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `prefixword${i}`);
    assert.equal(matchExpression('prefixword', terms(words)), '"prefixword"*', 'reported as a prefix query; not run');
    const { h, find, ids } = await library([...words.map((w) => ({ transcript: w })), { transcript: 'other words' }, { transcript: 'a prefix word' }]);
    const asked: string[] = [];
    const store = h.services.recordings.searchStore;
    const candidates = store.candidates.bind(store);
    store.candidates = (match, lo, hi, limit) => {
      asked.push(match);
      return candidates(match, lo, hi, limit);
    };
    assert.deepEqual(await find('prefixword'), ids.slice(0, 60).sort());
    assert.deepEqual(asked, [], 'FTS5 is not asked: its prefix query would merge the doclists of all 60 words first');
    assert.deepEqual(await find('prefixword1'), sorted(ids[1], ...ids.slice(10, 20)), '11 forms: an OR');
    assert.deepEqual(await find('other prefixword'), [], 'with another word, FTS5 walks that one and the prefix is tested');
    assert.deepEqual(await find('pr'), ids.slice(0, 60).concat(ids[61]!).sort(), 'a two-letter prefix with many forms');
    assert.deepEqual(await find('p'), [], 'one letter: the whole word only');
  });

  it('the forms of edited text are searchable, and forms of a rolled-back write are not remembered as stored', async () => {
    const { h, token, ids, find } = await library([{ transcript: 'first' }]);
    await h.req('PATCH', `/api/v2/recordings/${ids[0]}`, { token, body: { transcript: 'quarterly numbers' }, headers: { 'if-match': '1' } });
    assert.deepEqual(await find('quarter'), sorted(ids[0]));
    h.services.events.onEvent(() => {
      throw new Error('fail the transaction');
    });
    await h.req('POST', '/api/v2/recordings', { token, body: { type: 'clip', transcript: 'rolledbackword' }, headers: { 'idempotency-key': 'rb' } });
    assert.deepEqual(h.services.recordings.terms.expansions('rolledback', 5), []);
  });
});

// Search cost is bounded by the distinct conditions of q, not by its length: without that, 100
// repeated one-character non-ASCII words cost one FTS5 prefix merge each (~740 ms measured).
const noForms = { expansions: () => [] };
const forms = (list: string[]) => ({
  expansions: (p: string, limit: number) => list.filter((f) => f.startsWith(p)).slice(0, limit),
});

const CYRILLIC = 'абвгдежзийклмнопрстуфхцчшщъыьэюя';

/** A library of 300 recordings holding 3,000 distinct words that start with "ж". */
function zheLibrary() {
  const h = harness();
  const token = h.key();
  const principal: Principal = { accountId: h.accountId, kind: 'key', credentialId: 'key_t', integrationId: 'int_t', permissions: new Set() };
  let n = 0;
  const word = () => {
    let w = 'ж';
    for (let k = n++; ; k = Math.floor(k / 32)) {
      w += CYRILLIC[k % 32];
      if (k < 32) return w;
    }
  };
  for (let i = 0; i < 300; i++) h.services.recordings.create(principal, { type: 'memo', transcript: Array.from({ length: 10 }, word).join(' ') }, `k${i}`);
  return { h, token };
}

describe('search cost is bounded by the distinct conditions of q', () => {
  it('a repeated word is one condition', () => {
    assert.equal(matchExpression('ж '.repeat(100).trim(), noForms), '"ж"');
    assert.equal(matchExpression('жук жук ЖУК', noForms), '"жук"*');
    assert.equal(matchExpression('meet Meet meet', forms(['meet', 'meeting'])), '("meet" OR "meeting")');
    assert.equal(matchExpression('"a b" "a b" c', noForms), '"a b" AND "c"');
  });

  it('a word that is a prefix of another word of q is left out (the longer one implies it)', () => {
    assert.equal(matchExpression('жу жук', noForms), '"жук"*');
    assert.equal(matchExpression('meet meeting', forms(['meet', 'meeting'])), '("meeting")');
    assert.equal(matchExpression('café cafeteria', forms(['cafe', 'cafeteria'])), '("cafeteria")', 'compared without diacritics');
    assert.equal(matchExpression('ж жук', noForms), '"ж" AND "жук"*', 'a one-character word is exact, not implied');
    assert.equal(matchExpression('"meet me" meeting', forms(['meeting'])), '"meet me" AND ("meeting")', 'phrases stay');
  });

  it('a one-character word in any script matches only itself', async () => {
    const h = harness();
    const token = h.key();
    const ids: string[] = [];
    for (const [i, transcript] of ['ж', 'жук', 'é', 'écoute'].entries()) {
      ids.push((await h.req('POST', '/api/v2/recordings', { token, headers: { 'idempotency-key': `k${i}` }, body: { type: 'clip', transcript } })).json.recording.id);
    }
    const find = async (q: string) => (await h.req('GET', `/api/v2/recordings?q=${encodeURIComponent(q)}`, { token })).json.recordings.map((r: { id: string }) => r.id);
    assert.deepEqual(await find('ж'), [ids[0]]);
    assert.deepEqual(await find('Ж'), [ids[0]]);
    assert.deepEqual(await find('e'), [ids[2]], 'é folds to e, and matches only the word e/é');
    assert.deepEqual(await find('жу'), [ids[1]]);
  });

  it('q of 100 repeated one-character non-ASCII words over 3,000 indexed "ж…" words reaches FTS5 as one exact word and costs about one word', async () => {
    const { h, token } = zheLibrary();
    const seen: Array<string | undefined> = [];
    const store = h.services.recordings.searchStore;
    const candidates = store.candidates.bind(store);
    store.candidates = (match, lo, hi, limit) => {
      seen.push(match);
      return candidates(match, lo, hi, limit);
    };
    const q = 'ж '.repeat(100).trim();
    assert.equal(q.length, 199);
    const timed = async (text: string) => {
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        const res = await h.req('GET', `/api/v2/recordings?q=${encodeURIComponent(text)}`, { token });
        best = Math.min(best, performance.now() - t);
        assert.equal(res.status, 200);
      }
      return best;
    };
    const one = await timed('ж');
    const hundred = await timed(q);
    assert.deepEqual(new Set(seen), new Set(['"ж"']));
    // One prefix merge over all 3,000 words per repeat would cost about 100 times the single word.
    assert.ok(hundred < one * 10 + 20, `100 repeats took ${hundred.toFixed(1)} ms, one word ${one.toFixed(1)} ms`);
  });

  it('distinct two-character prefixes each read their own words once: 50 of them cost about one pass over the "ж…" words', async () => {
    const { h, token } = zheLibrary();
    const q = Array.from({ length: 50 }, (_, i) => `ж${CYRILLIC[i % 32]}${i >= 32 ? CYRILLIC[i - 32] : ''}`).join(' ');
    const t = performance.now();
    const res = await h.req('GET', `/api/v2/recordings?q=${encodeURIComponent(q)}`, { token });
    assert.equal(res.status, 200);
    assert.ok(performance.now() - t < 2000, 'generous bound: no pathological blow-up');
  });
});
