// Where the search's text tests and FTS5 fold words differently (src/services/search-plan.ts,
// foldsLikeIndex), FTS5 judges the row, so that a search finds the same recordings whichever way a
// page reads them (through FTS5, or in order past a cursor or below `to`) and whatever its limit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { folded, foldsLikeIndex } from '../../src/services/search-plan';
import { TokenizerStore } from '../../src/store/tokenizer-store';
import { harness, type Harness } from '../helpers/harness';
import { list } from '../helpers/recording-client';

describe('the characters the text tests fold as FTS5 does', () => {
  it('each one is folded and split into words by the tests exactly as by FTS5 (unicode61, remove_diacritics 2), in every position', () => {
    const h = harness();
    const tokenizer = new TokenizerStore(h.services.core.db);
    const testWords = (t: string) => folded(t).split(/[^\p{L}\p{N}\p{M}\p{Co}]+/u).filter(Boolean).sort();
    const contexts = (c: string) => [`a${c}b`, `a${c}`, `${c}b`, c, `A${c}B`];
    const alike: number[] = [];
    for (let cp = 0x80; cp < 0x3000; cp++) if (foldsLikeIndex(String.fromCodePoint(cp))) alike.push(cp);
    assert.ok(alike.length > 2000, `${alike.length}`);
    const wrong: string[] = [];
    for (let i = 0; i < alike.length; i += 400) {
      const cps = alike.slice(i, i + 400);
      const texts = cps.flatMap((cp) => contexts(String.fromCodePoint(cp)));
      const tokens = h.services.core.writer.write(() => tokenizer.tokenize(texts.map((title) => ({ title, transcript: '' }))))!;
      texts.forEach((text, k) => {
        const fts = tokens[k]!.title.slice().sort();
        if (JSON.stringify(fts) !== JSON.stringify(testWords(text))) wrong.push(`U+${text.codePointAt(text.length > 1 ? 1 : 0)!.toString(16)} in ${JSON.stringify(text)}: FTS5 ${JSON.stringify(fts)}, tests ${JSON.stringify(testWords(text))}`);
      });
    }
    assert.deepEqual(wrong.slice(0, 10), []);
    // And some that differ are not among them.
    for (const c of ['ё', 'й', 'έ', 'أ', 'ſ', 'µ']) assert.equal(foldsLikeIndex(c), false, c);
    for (const c of ['é', 'ñ', 'ß', 'Å', '—', '’', '€']) assert.equal(foldsLikeIndex(c), true, c);
  });
});

/** 20 recordings, newest first, alternating `a` and `b` as transcripts, and the key to list them. */
function library(a: string, b: string) {
  const h = harness({ rateLimit: 0 });
  const token = h.key();
  const app = h.services.auth.authenticate(token);
  const ids = { a: [] as string[], b: [] as string[] };
  for (let i = 0; i < 20; i++) {
    const text = i % 2 === 0 ? a : b;
    ids[i % 2 === 0 ? 'a' : 'b'].push(h.services.recordings.create(app, { type: 'clip', recordedAt: 1_000_000 - i, transcript: text }, `k${i}`).row.id);
  }
  return { h, token, ids };
}

async function walk(h: Harness, token: string, query: Record<string, string | number>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let n = 0; n < 50; n++) {
    const res = await list(h, token, { ...query, ...(cursor ? { cursor } : {}) });
    assert.equal(res.status, 200, res.text);
    seen.push(...res.json.recordings.map((r: { id: string }) => r.id));
    if (res.json.nextCursor === null) return seen;
    cursor = res.json.nextCursor;
  }
  throw new Error('paging did not end');
}

describe('a search finds the same recordings however its pages read them', () => {
  for (const [q, a, b] of [
    ['ещё', 'ещё раз', 'еще раз'],
    ['мои', 'мои слова', 'мой слова'],
    ['ωμέγα', 'ωμέγα δύο', 'ωμεγα δύο'],
    ['أحمد', 'أحمد قال', 'احمد قال'],
    // An ASCII query over text with a mark FTS5 splits words at (the tests drop it): the rows hold it.
    ['abcdef', 'abcdef ghi', 'abc\u0305def ghi'],
  ] as const) {
    it(`"${q}" over "${a}" and "${b}": one page, pages of 1, 3 and 5, and below a "to" that excludes nothing, alike`, async () => {
      const { h, token, ids } = library(a, b);
      const onePage = await walk(h, token, { q, limit: 100 });
      // What FTS5 finds: the texts with the word as FTS5 folds it.
      assert.deepEqual(onePage, ids.a);
      for (const limit of [1, 3, 5]) assert.deepEqual(await walk(h, token, { q, limit }), onePage, `limit ${limit}`);
      assert.deepEqual(await walk(h, token, { q, limit: 100, to: 9_999_999_999 }), onePage, 'read in order below to');
    });
  }

  it('Latin accents stay with the text tests: pages past a cursor read in order ("cafe" finds "café" and "cafe" alike); other text makes a page walk FTS5 once, not look up each row', async () => {
    const { h, token, ids } = library('un café noir', 'un cafe noir');
    const store = h.services.recordings.searchStore;
    let walks = 0;
    const candidates = store.candidates.bind(store);
    store.candidates = (...args) => {
      walks++;
      return candidates(...args);
    };
    const order = [...ids.a, ...ids.b].sort((x, y) => ids.a.concat(ids.b).indexOf(x) - ids.a.concat(ids.b).indexOf(y));
    const onePage = await walk(h, token, { q: 'cafe', limit: 100 });
    assert.deepEqual([...onePage].sort(), [...order].sort());
    walks = 0;
    assert.deepEqual(await walk(h, token, { q: 'cafe', limit: 3 }), onePage);
    assert.equal(walks, 1, 'the first page walks FTS5; the six past a cursor read in order');

    const cyrillic = library('ещё раз', 'еще раз');
    const s2 = cyrillic.h.services.recordings.searchStore;
    let walks2 = 0;
    const candidates2 = s2.candidates.bind(s2);
    s2.candidates = (...args) => {
      walks2++;
      return candidates2(...args);
    };
    let pages = 0;
    let cursor: string | undefined;
    do {
      const res = await list(cyrillic.h, cyrillic.token, { q: 'раз', limit: 3, ...(cursor ? { cursor } : {}) });
      pages++;
      cursor = res.json.nextCursor ?? undefined;
    } while (cursor);
    assert.equal(walks2, pages, 'one FTS5 walk a page');
  });
});
