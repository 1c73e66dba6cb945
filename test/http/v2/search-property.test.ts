// Properties of search (docs/decisions.md §5 "q"):
// - walking all pages with any filters returns each matching recording exactly once, newest first,
//   equal to a simple model of the matching rules;
// - no text in q, however strange, causes anything but 200 or 400.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../../src/errors';
import type { RecordingRow } from '../../../src/services/recording-model';
import { SEARCH_BUDGET } from '../../../src/services/recording-search';
import { harness } from '../../helpers/harness';
import { list } from '../../helpers/recording-client';

const VOCABULARY = ['meet', 'meeting', 'meat', 'team', 'tea', 'a', 'budget', 'review', 're', 'x1', 'café', 'naïve'];

const recordingArb = fc.record({
  type: fc.constantFrom('clip', 'memo'),
  recordedAt: fc.integer({ min: 1, max: 6 }),
  deviceId: fc.option(fc.constantFrom('ring-1', 'pin-1'), { nil: undefined }),
  title: fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 2 }).map((w) => w.join(' ')),
  transcript: fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 5 }).map((w) => w.join(', ')),
  deleted: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});

const prefixOf = fc.constantFrom(...VOCABULARY).chain((w) => fc.integer({ min: 1, max: [...w].length }).map((n) => [...w].slice(0, n).join('')));
const qArb = fc.oneof(
  prefixOf,
  fc.tuple(prefixOf, prefixOf).map(([a, b]) => `${a} ${b.toUpperCase()}`),
  fc.tuple(fc.constantFrom(...VOCABULARY), fc.constantFrom(...VOCABULARY)).map(([a, b]) => `"${a} ${b}"`),
);
// Each filter is absent more often than not, so that pages have something to walk.
const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: arb, weight: 2 });
const filtersArb = fc
  .record({
    type: sometimes(fc.constantFrom('clip', 'memo')),
    deviceId: sometimes(fc.constantFrom('ring-1', 'pin-1')),
    status: sometimes(fc.constantFrom('ready', 'pending')),
    from: sometimes(fc.integer({ min: 0, max: 7 })),
    to: sometimes(fc.integer({ min: 0, max: 7 })),
    q: fc.option(qArb, { nil: undefined, freq: 2 }),
  })
  .map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as Partial<typeof f>);

const fold = (s: string) => s.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
const words = (s: string) => fold(s).split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** The matching rules of docs/decisions.md §5, written out plainly. */
function matches(rec: { title: string; transcript: string }, q: string): boolean {
  const doc = [words(rec.title), words(rec.transcript)];
  const parts = q.split('"');
  return parts.every((part, i) => {
    const ws = words(part);
    if (i % 2 === 1) return ws.length === 0 || doc.some((d) => d.some((_, k) => ws.every((w, j) => d[k + j] === w)));
    return ws.every((w) => doc.some((d) => d.some((t) => (w.length === 1 && /[a-z0-9]/.test(w) ? t === w : t.startsWith(w)))));
  });
}

// A search page may also stop after a few candidates (its work is bounded): then pages may be
// short or empty, but the walk must still return exactly the same recordings.
const budgetArb = fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined, freq: 2 });
// Past a cursor a page first reads a few rows in order and goes on in order or through FTS5
// depending on how many met q: few probe rows make both happen in a small library.
const probeArb = fc.integer({ min: 1, max: 8 });

it('walking all pages with any filters returns each matching recording exactly once, newest first, whatever the search budget', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(recordingArb, { minLength: 3, maxLength: 40 }), filtersArb, fc.integer({ min: 1, max: 7 }), budgetArb, probeArb, async (recs, filters, limit, budget, probeRows) => {
      fc.pre(filters.from === undefined || filters.to === undefined || filters.from <= filters.to);
      const h = harness({ rateLimit: 0 }); // many requests per key: no rate limit
      h.services.recordings.searchBudget =
        budget !== undefined ? { candidates: budget, minCandidates: 0, ms: Infinity, probeRows, now: () => 0 } : { ...SEARCH_BUDGET, probeRows, now: () => 0 };
      const token = h.key();
      const principal = h.services.auth.authenticate(token);
      const svc = h.services.recordings;
      const rows: Array<{ row: RecordingRow; deleted: boolean }> = recs.map((r, i) => {
        const { row } = svc.create(principal, { type: r.type as 'clip', recordedAt: r.recordedAt, deviceId: r.deviceId, title: r.title, transcript: r.transcript }, `k${i}`);
        return { row, deleted: r.deleted };
      });
      for (const r of rows) if (r.deleted) svc.remove(principal, r.row.id, 1);
      const expected = rows
        .filter(({ deleted }) => !deleted)
        .map(({ row }) => row)
        .filter((row) => filters.type === undefined || row.type === filters.type)
        .filter((row) => filters.deviceId === undefined || row.device_id === filters.deviceId)
        .filter((row) => filters.status === undefined || row.status === filters.status)
        .filter((row) => filters.from === undefined || row.recorded_at >= filters.from)
        .filter((row) => filters.to === undefined || row.recorded_at <= filters.to)
        .filter((row) => filters.q === undefined || matches(row, filters.q))
        .sort((a, b) => b.recorded_at - a.recorded_at || b.created_at - a.created_at || rows.findIndex((r) => r.row === b) - rows.findIndex((r) => r.row === a))
        .map((row) => row.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 200; pages++) {
        const res = await list(h, token, { ...filters, limit, ...(cursor ? { cursor } : {}) });
        assert.equal(res.status, 200, res.text);
        assert.ok(res.json.recordings.length <= limit);
        seen.push(...res.json.recordings.map((r: { id: string }) => r.id));
        cursor = res.json.nextCursor;
        if (!cursor) break;
        if (budget === undefined) assert.equal(res.json.recordings.length, limit, 'only the last page is short');
      }
      assert.deepEqual(seen, expected, JSON.stringify(filters));
    }),
    { numRuns: 150 },
  );
});

it('no text in q causes a failure: any string gives 200 or a 400 naming q', async () => {
  const h = harness({ rateLimit: 0 }); // many requests per key: no rate limit
  const token = h.key();
  const principal = h.services.auth.authenticate(token);
  for (const [i, t] of ['meeting notes', 'café "quoted" text', 'NEAR(a b) OR x*', 'über straße 日本語'].entries()) {
    h.services.recordings.create(principal, { type: 'clip', transcript: t }, `seed-${i}`);
  }
  const strings = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 210 }),
    fc.string({ unit: fc.constantFrom('"', '*', '^', ':', '(', ')', '-', '+', ' ', 'a', 'N', 'E', 'A', 'R', 'O', 'T', '\\', "'", '{', '}', '\u0000', 'é'), maxLength: 40 }),
    fc.array(fc.constantFrom('AND', 'OR', 'NOT', 'NEAR', 'NEAR(', '"', '*', 'title:', 'meet', 'caf', '^', '-', 'x'), { maxLength: 12 }).map((w) => w.join(' ')),
  );
  await fc.assert(
    fc.asyncProperty(strings, async (q) => {
      const res = await list(h, token, { q });
      assert.ok(res.status === 200 || (res.status === 400 && /q/.test(res.json.error.message)), `${JSON.stringify(q)} → ${res.status} ${res.text}`);
      // The service directly, with the raw string (lone surrogates and all, no URL encoding).
      try {
        h.services.recordings.list(principal, { q, limit: 10 });
      } catch (e) {
        assert.ok(e instanceof AppError && e.code === 'invalid_request', `${JSON.stringify(q)} → ${String(e)}`);
      }
    }),
    { numRuns: 400 },
  );
  assert.deepEqual(h.errors, []);
});
