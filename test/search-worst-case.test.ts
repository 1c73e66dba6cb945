// Search cost is bounded by the distinct conditions of q, not by its length (adversarial tester:
// 100 repeated one-character non-ASCII words took ~740 ms, one FTS5 prefix merge per repeat).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../src/permissions';
import { matchExpression } from '../src/services/recording-search';
import { harness } from './helpers/harness';

const noForms = { expansions: () => [], continuations: () => [] };
const forms = (list: string[]) => ({
  expansions: (p: string, limit: number) => list.filter((f) => f.startsWith(p)).slice(0, limit),
  continuations: () => [],
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
    // Before: one prefix merge over all 3,000 words per repeat (about 100 times the single word).
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
