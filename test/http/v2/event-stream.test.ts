// GET /api/v2/events/stream (docs/decisions.md §10), read over a real socket from a listening server: feed
// order, the feed item as data, resume by Last-Event-ID / ?after= without gap or repeat, push on
// commit (no timer involved), pings, the per-credential limit, a stalled reader cut off with the
// server's memory flat, and the end of every stream on shutdown.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { after, describe, it } from 'node:test';
import { loadConfig, testConfig } from '../../../src/config';
import type { ConnectionTimeouts } from '../../../src/http/node-server';
import { startServer } from '../../../src/server';
import { FOREIGN_CHECK_MS, MAX_STREAMS_PER_CREDENTIAL, PING_MS } from '../../../src/services/event-stream';
import { FakeTimers } from '../../helpers/fake-timers';
import { harness, type Harness } from '../../helpers/harness';
import { created } from '../../helpers/recording-client';
import { listening, SseReader } from '../../helpers/sse-client';
import { waitFor } from '../../helpers/wait';

const STREAM = '/api/v2/events/stream';
const servers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of servers) await close();
});

async function setup(timeouts?: Partial<ConnectionTimeouts>) {
  const timers = new FakeTimers();
  const h = harness({ rateLimit: 0 }, { timers });
  const srv = await listening(h.app.fetch, { ...testConfig(), ...timeouts });
  servers.push(srv.close);
  const key = h.key(['events:read', 'recordings:create', 'recordings:write']);
  const open = (p = STREAM, headers: Record<string, string> = {}, token = key) => SseReader.open(srv.port, p, { authorization: `Bearer ${token}`, ...headers });
  return { h, timers, srv, key, open };
}

/** Opens the stream expecting a 400 invalid_request; its error (the connection dropped). */
async function refused(open: Awaited<ReturnType<typeof setup>>['open'], p: string, headers: Record<string, string>): Promise<{ code: string; message: string }> {
  const r = await open(p, headers);
  await r.until(() => r.body.includes('}}'), 'the error body');
  assert.equal(r.status, 400, r.body);
  const err = JSON.parse(r.body).error as { code: string; message: string };
  assert.equal(err.code, 'invalid_request');
  r.drop();
  return err;
}

/** The account's whole feed as GET /events returns it. */
async function feed(h: Harness, token: string): Promise<Array<Record<string, unknown>>> {
  const res = await h.req('GET', '/api/v2/events?limit=1000', { token });
  assert.equal(res.status, 200, res.text);
  return res.json.events;
}

/** Writes n events of the account directly, as the recording service does, in one transaction. */
function emit(h: Harness, n: number): void {
  h.services.core.writer.write(() => {
    for (let i = 0; i < n; i++) h.services.events.emit(h.accountId, 'recording.updated', `rec_${i}`, i + 1, h.clock.now());
  });
}

describe('GET /api/v2/events/stream', () => {
  it('is text/event-stream; each event is id, event type and the feed item JSON exactly as GET /events gives it, in feed order', async () => {
    const { h, key, open } = await setup();
    const r = await open(`${STREAM}?after=0`);
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'] ?? '', /^text\/event-stream/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    await created(h, key, { type: 'memo', title: 'a', transcript: 'hello' });
    await created(h, key, { type: 'clip', title: 'b' });
    const items = await feed(h, key);
    assert.equal(items.length, 3);
    await r.until(() => r.messages.length === 3, 'three events');
    assert.deepEqual(
      r.messages,
      items.map((e) => ({ id: e.id, event: e.type, data: JSON.stringify(e) })),
    );
    assert.deepEqual(r.messages.map((m) => m.event), ['recording.created', 'recording.transcript_ready', 'recording.created']);
    r.drop();
  });

  it('without Last-Event-ID or ?after= it starts at the end of the feed: only new events', async () => {
    const { h, key, open } = await setup();
    await created(h, key, { type: 'memo', title: 'old' });
    const r = await open();
    const rec = await created(h, key, { type: 'memo', title: 'new' });
    await r.until(() => r.messages.length === 1, 'the new event');
    assert.equal(JSON.parse(r.messages[0]!.data).recordingId, rec.id);
    r.drop();
  });

  it('pushes a committed event within 100 ms, with no timer firing (one commit notification, no polling)', async () => {
    const { h, key, open, timers } = await setup();
    const r = await open();
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      await created(h, key, { type: 'memo', title: `n${i}` });
      await r.until(() => r.messages.length === i + 1, 'the pushed event', 1000);
      assert.ok(performance.now() - t0 < 100, `event ${i} arrived after ${performance.now() - t0} ms`);
    }
    assert.equal(timers.active, 2, 'the ping and foreign-commit timers exist but were never advanced');
    r.drop();
  });

  it('a reconnect with Last-Event-ID after a dropped connection misses nothing and repeats nothing (also past the 100-event page)', async () => {
    const { h, key, open } = await setup();
    emit(h, 150);
    const first = await open(`${STREAM}?after=0`);
    await first.until(() => first.messages.length >= 120, 'the first 120');
    first.drop();
    const seen = first.messages.map((m) => m.id);
    emit(h, 130); // written while disconnected
    // EventSource resends the URL it first used (?after=0): Last-Event-ID must win.
    const second = await open(`${STREAM}?after=0`, { 'Last-Event-ID': seen[seen.length - 1]! });
    emit(h, 20); // and after reconnecting
    await second.until(() => seen.length + second.messages.length >= 300, 'every event');
    const all = [...seen, ...second.messages.map((m) => m.id)];
    const expected = (await h.services.events.feed(h.accountId, undefined, 1000)).events.map((e) => e.id);
    assert.equal(expected.length, 300);
    assert.deepEqual(all, expected);
    second.drop();
  });

  it('?after=<event id> starts after that event', async () => {
    const { h, open } = await setup();
    emit(h, 5);
    const ids = h.services.events.feed(h.accountId, undefined, 10).events.map((e) => e.id);
    const r = await open(`${STREAM}?after=${ids[2]}`);
    await r.until(() => r.messages.length === 2, 'two events');
    assert.deepEqual(r.messages.map((m) => m.id), ids.slice(3));
    r.drop();
  });

  it('a malformed Last-Event-ID or ?after= is 400 invalid_request naming it', async () => {
    const { open } = await setup();
    for (const [p, headers, name] of [
      [`${STREAM}?after=abc`, {}, 'after'],
      [`${STREAM}?after=`, {}, 'after'],
      [STREAM, { 'Last-Event-ID': 'evc1.xyz' }, 'Last-Event-ID'],
    ] as const) {
      assert.match((await refused(open, p, headers)).message, new RegExp(name));
    }
  });

  it('a Last-Event-ID or ?after= past the newest event (kept from before a restore) is 400 saying so, not a stream that skips the ids given out again', async () => {
    const { h, open } = await setup();
    emit(h, 3);
    const newest = h.services.events.store.lastSeq();
    for (const [p, headers, named] of [
      [STREAM, { 'Last-Event-ID': String(newest + 6) }, `Last-Event-ID ${newest + 6}`],
      [`${STREAM}?after=${newest + 6}`, {}, `after=${newest + 6}`],
      // Last-Event-ID wins over ?after=, for the refusal too.
      [`${STREAM}?after=0`, { 'Last-Event-ID': String(newest + 1) }, `Last-Event-ID ${newest + 1}`],
    ] as const) {
      const { message } = await refused(open, p, headers);
      assert.ok(message.startsWith(`${named} is after the newest event (${newest}): was the database restored from a backup?`), message);
    }
    assert.equal(h.services.eventHub.size, 0);
    // The newest id itself is a start we gave out: the next events arrive, none skipped.
    const r = await open(STREAM, { 'Last-Event-ID': String(newest) });
    assert.equal(r.status, 200);
    emit(h, 5);
    await r.until(() => r.messages.length === 5, 'the five new events');
    assert.deepEqual(r.messages.map((m) => Number(m.id)), [1, 2, 3, 4, 5].map((i) => newest + i));
    r.drop();
  });

  it("the end is the server's newest event (ids are one sequence for every account): an id past this account's last event but not past another's is a start", async () => {
    const { h, open } = await setup();
    emit(h, 1);
    const other = h.services.auth.createAccount('other');
    h.services.core.writer.write(() => h.services.events.emit(other.id, 'recording.created', 'rec_o', 1, h.clock.now()));
    const r = await open(`${STREAM}?after=${h.services.events.store.lastSeq()}`);
    assert.equal(r.status, 200);
    r.drop();
  });

  it('HEAD answers the stream headers and opens no stream', async () => {
    const { h, key } = await setup();
    const res = await h.app.request('http://127.0.0.1:8080/api/v2/events/stream', { method: 'HEAD', headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(h.services.eventHub.size, 0);
  });

  it('needs events:read (403) and credentials (401)', async () => {
    const { h, open } = await setup();
    const noRead = await open(STREAM, {}, h.key(['recordings:read']));
    assert.equal(noRead.status, 403);
    noRead.drop();
    const none = await SseReader.open((await setup()).srv.port, STREAM);
    assert.equal(none.status, 401);
    none.drop();
  });

  it(`sends ": ping" every ${PING_MS / 1000} s (fake timer)`, async () => {
    const { timers, open } = await setup();
    const r = await open();
    timers.advance(PING_MS - 1);
    assert.equal(r.comments.length, 0);
    timers.advance(1);
    await r.until(() => r.comments.length === 1, 'a ping');
    timers.advance(PING_MS);
    await r.until(() => r.comments.length === 2, 'a second ping');
    assert.deepEqual(r.comments, ['ping', 'ping']);
    assert.equal(r.messages.length, 0);
    r.drop();
  });

  it(`the ${MAX_STREAMS_PER_CREDENTIAL + 1}th open stream of one key is 429 rate_limited with Retry-After; another key, or a closed stream, frees room`, async () => {
    const { h, open } = await setup();
    const streams = [];
    for (let i = 0; i < MAX_STREAMS_PER_CREDENTIAL; i++) {
      const s = await open();
      assert.equal(s.status, 200);
      streams.push(s);
    }
    const refused = await open();
    await refused.until(() => refused.body.includes('}}'), 'the error body');
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body).error.code, 'rate_limited');
    assert.match(refused.headers['retry-after'] ?? '', /^\d+$/);
    refused.drop();
    const other = await open(STREAM, {}, h.key(['events:read']));
    assert.equal(other.status, 200);
    streams[0]!.drop();
    await waitFor(() => h.services.eventHub.size === MAX_STREAMS_PER_CREDENTIAL, 'the dropped stream released', { timeoutMs: 2_000, everyMs: 5 });
    const again = await open();
    assert.equal(again.status, 200);
    for (const s of [...streams, other, again]) s.drop();
  });

  it('events another process commits (the CLI) arrive through the one shared check, not a timer per stream', async () => {
    const { h, timers, open } = await setup();
    const a = await open();
    const b = await open();
    // A commit this process's writer did not see: the row goes in without the service's hook.
    h.services.core.db.prepare("INSERT INTO events (account_id, type, recording_id, revision, created_at) VALUES (?, 'recording.created', 'rec_cli', 1, 0)").run(h.accountId);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(a.messages.length + b.messages.length, 0, 'nothing before the check');
    assert.equal(timers.active, 2, 'two timers for the whole hub, however many streams');
    timers.advance(FOREIGN_CHECK_MS);
    await a.until(() => a.messages.length === 1, 'the foreign event');
    await b.until(() => b.messages.length === 1, 'the foreign event');
    a.drop();
    b.drop();
  });

  it('an open stream is not cut by --idle-timeout-ms, even one shorter than the ping interval (a quiet stream is not an idle connection)', async () => {
    // Real time: the idle timeout is the socket's. The ping (fake timer) never comes here.
    const idleTimeoutMs = 200;
    const { h, open } = await setup({ idleTimeoutMs });
    const r = await open();
    assert.equal(r.status, 200);
    await new Promise((resolve) => setTimeout(resolve, idleTimeoutMs * 4));
    assert.ok(!r.closed, 'the stream was cut while quiet');
    assert.equal(h.services.eventHub.size, 1);
    emit(h, 1);
    await r.until(() => r.messages.length === 1, 'the event after the quiet time');
    r.drop();
  });

  it('a key revoked while streaming ends its stream at the next ping', async () => {
    const { h, timers, srv } = await setup();
    const made = h.services.auth.createKey(h.accountId, { name: 'k', permissions: ['events:read'] });
    const r = await SseReader.open(srv.port, STREAM, { authorization: `Bearer ${made.secret}` });
    h.services.auth.revokeKey(h.accountId, made.key.id);
    timers.advance(PING_MS);
    await r.until(() => r.ended, 'the end of the stream');
    assert.equal(h.services.eventHub.size, 0);
    r.drop();
  });

  it('a key revoked while streaming gets no event after the revocation: its stream ends at once, not at the next ping', async () => {
    const { h, srv } = await setup();
    const made = h.services.auth.createKey(h.accountId, { name: 'k', permissions: ['events:read'] });
    const r = await SseReader.open(srv.port, STREAM, { authorization: `Bearer ${made.secret}` });
    emit(h, 1);
    await r.until(() => r.messages.length === 1, 'the event before the revocation');
    h.services.auth.revokeKey(h.accountId, made.key.id);
    emit(h, 3);
    await r.until(() => r.ended, 'the end of the stream');
    assert.equal(r.messages.length, 1, 'none of the events after the revocation');
    assert.equal(h.services.eventHub.size, 0);
    r.drop();
  });

  it('a stalled reader (not reading its socket) is cut off after a ping interval with a full buffer, and the server memory stays flat', async () => {
    const { h, timers, srv, key } = await setup();
    // 400,000 events (~52 MB as SSE) already in the feed, written by one SQL statement so that
    // the test itself leaves little freed memory behind for the stream to reuse unseen.
    h.services.core.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
         INSERT INTO events (account_id, type, recording_id, revision, created_at) SELECT ?, 'recording.updated', 'rec_' || i, i, 0 FROM n`,
      )
      .run(h.accountId);
    collectGarbage();
    const before = process.memoryUsage().rss;
    const r = SseReader.stalled(srv.port, `${STREAM}?after=0`, { authorization: `Bearer ${key}` });
    await waitFor(() => h.services.eventHub.size === 1, 'the stream open', { timeoutMs: 2_000, everyMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 500)); // let the server fill every buffer it can
    collectGarbage(); // what is still held, not what is garbage not yet collected
    const grown = process.memoryUsage().rss - before;
    // Measured: ~20 MB (the database pages the stream read, V8 heap pages kept after collection);
    // ~75 MB when the stream reads on regardless of its buffer.
    assert.ok(grown < 40 * 1024 * 1024, `RSS grew ${(grown / 1048576).toFixed(1)} MB with a stalled reader`);
    timers.advance(PING_MS);
    assert.equal(h.services.eventHub.size, 1, 'one full interval is not yet a stall');
    timers.advance(PING_MS);
    assert.equal(h.services.eventHub.size, 0, 'cut off');
    r.resume();
    await r.until(() => r.closed, 'the connection closed');
    assert.ok(!r.ended, 'cut, not a clean end: the reader resumes from its last id');
    assert.ok(r.messages.length < 400_000);
  });

  it('a reader that was behind but reads again is not cut off: only a whole ping interval with a full buffer and no read is a stall', async () => {
    const { h, timers, srv, key } = await setup();
    for (let i = 0; i < 5; i++) emit(h, 10_000);
    const r = SseReader.stalled(srv.port, `${STREAM}?after=0`, { authorization: `Bearer ${key}` });
    await waitFor(() => h.services.eventHub.size === 1, 'the stream open', { timeoutMs: 2_000, everyMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    timers.advance(PING_MS); // full, not read: one strike
    r.resume();
    await r.until(() => r.messages.length === 50_000, 'every event', 20_000);
    timers.advance(PING_MS);
    timers.advance(PING_MS);
    assert.equal(h.services.eventHub.size, 1);
    await r.until(() => r.comments.length === 2, 'two pings');
    r.drop();
  });
});

describe('event streams on shutdown', () => {
  it('serve closes every open stream cleanly (the response ends) and stops promptly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-stream-'));
    const config = loadConfig({ db: path.join(dir, 'r.db'), port: '0' }, {});
    const running = await startServer(config, () => undefined);
    try {
      const account = running.services.auth.createAccount('me', 'correct horse');
      const { secret } = running.services.auth.createKey(account.id, { name: 'k', permissions: ['events:read'] });
      const port = Number(new URL(running.url).port);
      const r = await SseReader.open(port, STREAM, { authorization: `Bearer ${secret}` });
      assert.equal(r.status, 200);
      const t0 = performance.now();
      await running.close();
      await r.until(() => r.ended && r.closed, 'the clean end of the response');
      assert.ok(performance.now() - t0 < 2000, `shutdown took ${performance.now() - t0} ms`);
    } finally {
      await running.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A full garbage collection (V8's gc(), enabled at run time for this test). */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

