// A page of recordings is bounded in bytes as well as in count (docs/decisions.md §12): with long
// transcripts a page stops at about PAGE_BYTES of JSON and says so with a nextCursor, and paging
// on still returns every recording exactly once, newest first (v2, v1 and search alike).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PAGE_BYTES } from '../../src/services/recording-search';
import { harness, type Harness } from '../helpers/harness';
import { list } from '../helpers/recording-client';
import { v1List } from '../helpers/v1-client';

/** ~1 MB of text with a rare word to search for. */
const LONG = `${'meeting notes about the garden '.repeat(34_000)}zebra`;

function library(count: number) {
  const h = harness();
  const token = h.key();
  const app = h.services.auth.authenticate(token);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // recordedAt descending with i: ids[] is newest first, the order of a listing.
    ids.push(h.services.recordings.create(app, { type: 'memo', recordedAt: 1_000_000 - i, title: `long ${i}`, transcript: LONG }, `k${i}`).row.id);
  }
  return { h, token, ids };
}

/** Pages through one listing to the end; every page checked against the byte bound. */
async function pageAll(h: Harness, fetchPage: (cursor: string | undefined) => ReturnType<Harness['req']>) {
  const seen: string[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const res = await fetchPage(cursor);
    assert.equal(res.status, 200, res.text.slice(0, 300));
    sizes.push(res.text.length);
    seen.push(...res.json.recordings.map((r: { id: string }) => r.id));
    if (res.json.nextCursor === null) return { seen, sizes };
    cursor = res.json.nextCursor;
  }
  throw new Error('paging did not end');
}

describe('a page is bounded in bytes', () => {
  it('v2: a page of 1 MB transcripts stops near PAGE_BYTES with a nextCursor, and paging returns every recording once', async () => {
    const { h, token, ids } = library(10);
    const first = await list(h, token, { limit: 100 });
    assert.equal(first.status, 200);
    assert.ok(first.json.recordings.length >= 1 && first.json.recordings.length < 10, `page held ${first.json.recordings.length}`);
    assert.notEqual(first.json.nextCursor, null, 'a page cut short by its size has a nextCursor');
    const { seen, sizes } = await pageAll(h, (cursor) => list(h, token, { limit: 100, ...(cursor ? { cursor } : {}) }));
    assert.deepEqual(seen, ids, 'no recording skipped or repeated, newest first');
    for (const size of sizes) assert.ok(size <= PAGE_BYTES + 64 * 1024, `page of ${size} bytes`);
  });

  it('v2 search: the same bound, and the cursor continues the search', async () => {
    const { h, token, ids } = library(9);
    const { seen, sizes } = await pageAll(h, (cursor) => list(h, token, { q: 'zebra', limit: 100, ...(cursor ? { cursor } : {}) }));
    assert.deepEqual(seen, ids);
    assert.ok(sizes.length >= 3, `${sizes.length} pages`);
    for (const size of sizes) assert.ok(size <= PAGE_BYTES + 64 * 1024, `page of ${size} bytes`);
  });

  it('v1: the same bound', async () => {
    const { h, token, ids } = library(9);
    const { seen, sizes } = await pageAll(h, (cursor) => v1List(h, token, { limit: 100, ...(cursor ? { cursor } : {}) }));
    assert.deepEqual(seen, ids);
    assert.ok(sizes.length >= 3, `${sizes.length} pages`);
    for (const size of sizes) assert.ok(size <= PAGE_BYTES + 64 * 1024, `page of ${size} bytes`);
  });

  it('a large page is decided on sizes and its rows read as it is written: a row deleted meanwhile is left out', async () => {
    const { h, token, ids } = library(3);
    const principal = h.services.auth.authenticate(token);
    const lazy = h.services.recordings.listLazily(principal, { limit: 100 });
    assert.equal(lazy.rows.length, 0, 'no text read yet');
    assert.equal(lazy.later.length, 3);
    const res = await list(h, token, { limit: 100 });
    assert.deepEqual(res.json.recordings.map((r: { id: string }) => r.id), ids);
    // Delete the second one between the page's keys and the writing of its rows.
    const page = h.services.recordings.listLazily(principal, { limit: 100 });
    await h.req('DELETE', `/api/v2/recordings/${ids[1]}`, { token, headers: { 'if-match': '1' } });
    assert.equal(page.load(page.later[1]!), undefined);
    assert.deepEqual(h.services.recordings.list(principal, { limit: 100 }).rows.map((r) => r.id), [ids[0], ids[2]]);
  });

  it('small recordings are not affected: limit decides, and the last page has a null nextCursor', async () => {
    const h = harness();
    const token = h.key();
    const app = h.services.auth.authenticate(token);
    for (let i = 0; i < 5; i++) h.services.recordings.create(app, { type: 'clip', transcript: `short ${i}` }, `s${i}`);
    const page = await list(h, token, { limit: 5 });
    assert.equal(page.json.recordings.length, 5);
    assert.equal(page.json.nextCursor, null);
  });
});
