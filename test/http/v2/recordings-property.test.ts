// Property: any sequence of creates, replays, edits and deletes keeps the
// library equal to a simple in-memory model: every response (status and body) and, after the
// sequence, the whole listing walked page by page.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../../../src/services/recording-model';
import { harness, type Harness } from '../../helpers/harness';
import { create, get, list, patch, remove } from '../../helpers/recording-client';

interface ModelRec {
  json: Record<string, unknown>;
  body: string;
  deleted: boolean;
  order: number;
}

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', '');
const createBody = fc.record(
  {
    type: fc.constantFrom('clip', 'memo'),
    title: word,
    transcript: word,
    summary: word,
    recordedAt: fc.constantFrom(1000, 1001, 2000),
    externalId: fc.constantFrom('ext-1', 'ext-2'),
    // Mostly on memos: a clip with audio is a 400 that changes nothing.
    audio: fc.constantFrom([{ clientId: 'phone', fileId: 'f1' }], [] as Array<{ clientId: string; fileId: string }>),
  },
  { requiredKeys: ['type'] },
);
const op = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), key: fc.integer({ min: 0, max: 5 }), body: createBody }),
  // Repeats of an earlier create: the same key and body (a retry), or a new key (an import again).
  fc.record({ kind: fc.constant('replay' as const), target: fc.nat(), newKey: fc.boolean() }),
  fc.record({
    kind: fc.constant('patch' as const),
    target: fc.nat(),
    stale: fc.boolean(),
    body: fc.record({ title: word, transcript: word, summary: word, pinned: fc.boolean() }, { requiredKeys: [] }),
  }),
  fc.record({ kind: fc.constant('delete' as const), target: fc.nat(), stale: fc.boolean() }),
  fc.record({ kind: fc.constant('get' as const), target: fc.nat() }),
);

class Model {
  recs: ModelRec[] = [];
  keys = new Map<string, ModelRec>();
  externals = new Map<string, ModelRec>();

  create(key: string, body: Record<string, unknown>, id: () => string, now: number): { status: number; rec?: ModelRec } {
    if (body.type === 'clip' && Array.isArray(body.audio) && body.audio.length > 0) return { status: 400 };
    const canon = canonicalJson(body);
    const replay = (rec: ModelRec) => (rec.deleted ? { status: 410 } : rec.body !== canon ? { status: 409 } : { status: 200, rec });
    const keyed = this.keys.get(key);
    if (keyed) return replay(keyed);
    const ext = typeof body.externalId === 'string' ? this.externals.get(body.externalId) : undefined;
    if (ext) {
      const r = replay(ext);
      if (r.status === 200) this.keys.set(key, ext);
      return r;
    }
    const transcript = (body.transcript as string | undefined) ?? '';
    const json: Record<string, unknown> = {
      id: id(), type: body.type, title: body.title ?? '', transcript, summary: body.summary ?? '', recordedAt: body.recordedAt ?? now,
      updatedAt: now, revision: 1, status: transcript ? 'ready' : 'pending', pinned: false,
      audio: body.type === 'memo' && body.audio ? body.audio : [],
    };
    if (body.externalId !== undefined) json.externalId = body.externalId;
    const rec = { json, body: canon, deleted: false, order: this.recs.length };
    this.recs.push(rec);
    this.keys.set(key, rec);
    if (typeof body.externalId === 'string') this.externals.set(body.externalId, rec);
    return { status: 201, rec };
  }

  patch(rec: ModelRec, stale: boolean, body: Record<string, unknown>, now: number): number {
    if (rec.deleted) return 410;
    if (stale) return 412;
    const next = { ...rec.json, ...body };
    if (typeof body.transcript === 'string' && body.transcript !== '') next.status = 'ready';
    if (canonicalJson(next) !== canonicalJson(rec.json)) rec.json = { ...next, revision: (rec.json.revision as number) + 1, updatedAt: now };
    return 200;
  }

  live(): ModelRec[] {
    return this.recs
      .filter((r) => !r.deleted)
      .sort((a, b) => (b.json.recordedAt as number) - (a.json.recordedAt as number) || b.order - a.order);
  }
}

async function walk(h: Harness, token: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  do {
    const res = await list(h, token, { limit: 3, ...(cursor ? { cursor } : {}) });
    assert.equal(res.status, 200, res.text);
    out.push(...res.json.recordings);
    cursor = res.json.nextCursor;
  } while (cursor);
  return out;
}

it('any sequence of creates, replays, edits and deletes keeps the library equal to the model', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 40, maxLength: 40 }), async (ops, ticks) => {
      const h = harness({ rateLimit: 0 }); // many requests per key: no rate limit
      h.clock.set(1500);
      const token = h.key();
      const model = new Model();
      const sent: Array<{ key: string; body: Record<string, unknown> }> = [];
      for (const [i, o] of ops.entries()) {
        h.clock.advance(ticks[i]!);
        const now = h.clock.now();
        if (o.kind === 'create' || o.kind === 'replay') {
          const earlier = sent[o.kind === 'replay' ? o.target % Math.max(1, sent.length) : -1];
          if (o.kind === 'replay' && !earlier) continue;
          const key = o.kind === 'create' ? `key-${o.key}` : o.newKey ? `key-new-${i}` : earlier!.key;
          const body = o.kind === 'create' ? o.body : earlier!.body;
          sent.push({ key, body });
          const res = await create(h, token, body, key);
          const expected = model.create(key, body, () => res.json?.recording?.id, now);
          assert.equal(res.status, expected.status, `${JSON.stringify(o)} → ${res.text}`);
          if (expected.rec) assert.deepEqual(res.json.recording, expected.rec.json);
          if (res.status === 200) assert.equal(res.headers.get('idempotent-replayed'), 'true');
          continue;
        }
        const rec = model.recs[o.target % Math.max(1, model.recs.length)];
        if (!rec) continue;
        const id = rec.json.id as string;
        const rev = rec.json.revision as number;
        if (o.kind === 'get') {
          const res = await get(h, token, id);
          assert.equal(res.status, rec.deleted ? 410 : 200, res.text);
          if (!rec.deleted) assert.deepEqual(res.json.recording, rec.json);
        } else if (o.kind === 'patch') {
          const res = await patch(h, token, id, o.body, `"${o.stale ? rev - 1 : rev}"`);
          assert.equal(res.status, model.patch(rec, o.stale, o.body, now), res.text);
          if (res.status === 200) assert.deepEqual(res.json.recording, rec.json);
        } else {
          const res = await remove(h, token, id, String(o.stale ? rev - 1 : rev));
          const expected = rec.deleted ? 410 : o.stale ? 412 : 204;
          assert.equal(res.status, expected, res.text);
          if (expected === 204) rec.deleted = true;
        }
      }
      assert.deepEqual(await walk(h, token), model.live().map((r) => r.json));
    }),
    { numRuns: 60 },
  );
});
