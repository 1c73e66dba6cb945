// The work of one search page is bounded (docs/decisions.md §12), so a search for a common word or
// a wide prefix costs about the same in a large library as in a small one: a search reads at most SearchBudget.candidates
// candidate rows (and stops after SearchBudget.ms once minCandidates are read); a page that runs out
// of budget is short, or empty, and has a nextCursor after the last candidate it read. Paging on
// returns every match exactly once, newest first — in v2 and in v1.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SearchBudget } from '../../src/services/recording-search';
import { harness, type Harness, type TestResponse } from '../helpers/harness';
import { list } from '../helpers/recording-client';
import { v1List } from '../helpers/v1-client';

/** Counts candidates only: a clock that never moves. */
const candidatesOnly = (candidates: number): SearchBudget => ({ candidates, minCandidates: 0, ms: Infinity, probeRows: 64, now: () => 0 });

/**
 * 30 recordings, newest first in ids[]; every one holds "the" and "of", and `matching` of them
 * (spread out) the phrase "the of" and the word "interval" (one of 60 words starting "inte").
 */
function library(matching: number[]) {
  const h = harness({ rateLimit: 0 });
  const token = h.key();
  const app = h.services.auth.authenticate(token);
  const inte = Array.from({ length: 60 }, (_, i) => `inte${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const transcript = matching.includes(i) ? `the of interval ${inte[i]}` : `of the into ${inte[i + 30]!.replace('inte', 'inta')}`;
    // recordedAt descending with i: ids[] is newest first, the order of a listing.
    ids.push(h.services.recordings.create(app, { type: 'clip', recordedAt: 1_000_000 - i, transcript }, `k${i}`).row.id);
  }
  // A few more words starting "inte", so that "inte" has more forms than are expanded into an OR.
  const formsId = h.services.recordings.create(app, { type: 'clip', recordedAt: 1, transcript: inte.join(' ') }, 'forms').row.id;
  return { h, token, ids, formsId };
}

async function walk(fetchPage: (cursor: string | undefined) => Promise<TestResponse>) {
  const pages: Array<{ ids: string[]; nextCursor: string | null }> = [];
  let cursor: string | undefined;
  for (let n = 0; n < 100; n++) {
    const res = await fetchPage(cursor);
    assert.equal(res.status, 200, res.text);
    pages.push({ ids: res.json.recordings.map((r: { id: string }) => r.id), nextCursor: res.json.nextCursor });
    if (res.json.nextCursor === null) return pages;
    cursor = res.json.nextCursor;
  }
  throw new Error('paging did not end');
}

const v2 = (h: Harness, token: string, q: string, limit: number) => (cursor: string | undefined) => list(h, token, { q, limit, ...(cursor ? { cursor } : {}) });
const v1 = (h: Harness, token: string, q: string, limit: number) => (cursor: string | undefined) => v1List(h, token, { q, limit, ...(cursor ? { cursor } : {}) });

describe('a search page reads a bounded number of candidates', () => {
  it('a clock past its time bound before the first candidate still moves every page on (no cursor back to the start, no endless empty pages)', async () => {
    const matching = [2, 3, 17, 29];
    const { h, token, ids } = library(matching);
    let t = 0;
    // Every look at the clock finds 5 ms gone: only the first candidate of a page is read.
    h.services.recordings.searchBudget = { candidates: 5000, minCandidates: 0, ms: 3, probeRows: 64, now: () => (t += 5) };
    const pages = await walk(v2(h, token, '"the of"', 10));
    assert.deepEqual(pages.flatMap((p) => p.ids), matching.map((i) => ids[i]));
    assert.ok(pages.length <= 31, `${pages.length} pages`);
  });

  for (const [version, fetcher] of [['v2', v2], ['v1', v1]] as const) {
    it(`${version}: a phrase of common words with sparse matches gives short and empty pages whose cursors together give exactly every match, newest first`, async () => {
      const matching = [2, 3, 17, 29];
      const { h, token, ids } = library(matching);
      h.services.recordings.searchBudget = candidatesOnly(4);
      const pages = await walk(fetcher(h, token, '"the of"', 10));
      assert.deepEqual(pages.flatMap((p) => p.ids), matching.map((i) => ids[i]));
      // 30 candidates ("of" or "the" is walked: the 30 that have them), 4 per page.
      assert.equal(pages.length, 8);
      assert.ok(pages.some((p) => p.ids.length === 0 && p.nextCursor !== null), 'an empty page still has a cursor');
      for (const p of pages) assert.ok(p.ids.length <= 4);
    });
  }

  it('a word with more forms than are expanded is tested on the rows read in order: the same matches, page by page', async () => {
    const matching = [0, 5, 6, 12, 28];
    const { h, token, ids, formsId } = library(matching);
    const expected = [...matching.map((i) => ids[i]), formsId];
    const all = await walk(v2(h, token, 'inte', 100));
    assert.deepEqual(all.map((p) => p.ids), [expected], 'within the default budget: one page');
    h.services.recordings.searchBudget = candidatesOnly(3);
    const pages = await walk(v2(h, token, 'inte', 2));
    assert.deepEqual(pages.flatMap((p) => p.ids), expected);
    // No FTS5 expression: all 31 recordings are read in order ("into", "inta…" included), 3 per page.
    assert.equal(pages.length, 11);
  });

  it('the text tests fold case and accents as the index does: a wide prefix and a phrase', async () => {
    const { h, token } = library([]);
    const app = h.services.auth.authenticate(token);
    const accented = h.services.recordings.create(app, { type: 'clip', recordedAt: 2_000_000, title: 'ÍNTÉGRO', transcript: 'Café, CRÈME brûlée' }, 'accented').row.id;
    const ids = async (q: string) => (await list(h, token, { q, limit: 100 })).json.recordings.map((r: { id: string }) => r.id);
    assert.ok((await ids('inte')).includes(accented), 'wide prefix "inte" finds ÍNTÉGRO');
    assert.ok(!(await ids('intf')).includes(accented));
    assert.deepEqual(await ids('"cafe creme"'), [accented]);
    assert.deepEqual(await ids('"crème café"'), []);
    assert.deepEqual(await ids('"cafe crem"'), [], 'words in a phrase are whole words');
  });

  it('a filter that few candidates pass is tested on each candidate, within the same bound', async () => {
    const { h, token, ids } = library([]);
    h.services.recordings.searchBudget = candidatesOnly(5);
    const pages = await walk((cursor) => list(h, token, { q: 'of', type: 'memo', limit: 10, ...(cursor ? { cursor } : {}) }));
    assert.deepEqual(pages.flatMap((p) => p.ids), []);
    // The first page walks "of" through FTS5 (5 of its 30 recordings); past its cursor the matches
    // are dense (every recording read has "of"), so the rest is read in order: the 25 others and
    // the one without "of" (26 rows, 5 per page, the last page ends the walk).
    assert.equal(pages.length, 7, '1 + 26 rows read in order, 5 per page');
    assert.equal(ids.length, 30);
  });

  it('a full page does not wait for the budget, and without a budget cut the last page has a null cursor', async () => {
    const { h, token, ids } = library([1, 2, 3]);
    h.services.recordings.searchBudget = candidatesOnly(1000);
    const pages = await walk(v2(h, token, 'of', 10));
    assert.deepEqual(pages.map((p) => p.ids.length), [10, 10, 10]);
    assert.deepEqual(pages.flatMap((p) => p.ids), ids);
  });

  it('the clock stops a page only after minCandidates, so a stalled machine cannot cut a small search short', async () => {
    const { h, token, ids } = library([4, 9]);
    let t = 0;
    h.services.recordings.searchBudget = { candidates: 1000, minCandidates: 7, ms: 1, probeRows: 64, now: () => (t += 10) };
    const pages = await walk(v2(h, token, '"the of"', 10));
    assert.deepEqual(pages.flatMap((p) => p.ids), [ids[4], ids[9]]);
    assert.equal(pages.length, 5, '30 candidates, 7 per page');
  });
});

describe('past a cursor, dense matches are read in order and sparse ones through FTS5', () => {
  // FTS5 seeks past a rowid by reading a word's postings from their start: deep in a common word's
  // matches that grows with the library. Reading rows in order finds a page of a dense word sooner.
  function spied(h: Harness) {
    const asked: Array<{ match: string; lo: number }> = [];
    const store = h.services.recordings.searchStore;
    const candidates = store.candidates.bind(store);
    store.candidates = (match, lo, hi, limit) => {
      asked.push({ match, lo });
      return candidates(match, lo, hi, limit);
    };
    return asked;
  }

  it('a word every recording has: the pages after the first read rows in order, and FTS5 is asked once', async () => {
    const { h, token, ids } = library([]);
    h.services.recordings.searchBudget = { ...candidatesOnly(1000), probeRows: 4 };
    const asked = spied(h);
    const pages = await walk(v2(h, token, 'of', 7));
    assert.deepEqual(pages.flatMap((p) => p.ids), ids, 'every match once, newest first');
    assert.equal(asked.length, 1, 'only the first page asked FTS5');
  });

  it('a rare word: the probe finds too few, and FTS5 goes on from the last row it read', async () => {
    const matching = [1, 2, 20];
    const { h, token, ids } = library(matching);
    h.services.recordings.searchBudget = { ...candidatesOnly(1000), probeRows: 4 };
    const asked = spied(h);
    const pages = await walk(v2(h, token, 'interval', 2));
    assert.deepEqual(pages.flatMap((p) => p.ids), matching.map((i) => ids[i]));
    assert.equal(asked.length, 2, 'the first page, then the second after its probe');
    // The second page starts after ids[2]: its probe reads ids[3..6], none of which has the word.
    const seqOf = (id: string) => h.services.core.db.prepare('SELECT seq FROM recordings WHERE id = ?').pluck().get(id) as number;
    assert.equal(asked[1]!.lo, seqOf(ids[6]!) + 1, 'from past the rows the probe read');
  });
});
