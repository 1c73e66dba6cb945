// The writer thread (src/writer-thread.ts): on `reclib serve`, writes are answered by a thread of
// their own, so a write that waits or works long does not hold up what the main thread answers.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { openSqlite } from '../src/db/sqlite';
import { PERMISSIONS, type Principal } from '../src/permissions';
import type { FromWriter } from '../src/writer-thread';
import { serveInProcess } from './helpers/in-process-server';

const json = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra });

describe('writes on the writer thread', () => {
  it('a write waiting for the write lock does not hold up reads or /healthz; it completes once the lock is free', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    assert.ok((await s.server.writerThread?.ready)?.length, 'the writer thread is running');
    // Another connection (as the admin CLI would) holds the write lock.
    const other = openSqlite(s.server.services.core.config.db);
    t.after(() => other.close());
    other.prepare('BEGIN IMMEDIATE').run();
    const create = fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'w1' }), body: JSON.stringify({ type: 'clip', transcript: 'waits for the lock' }) });
    let createdAt: number | undefined;
    void create.then(() => (createdAt = performance.now()));
    await new Promise((r) => setTimeout(r, 200)); // the create reached the writer and waits on the lock
    const t0 = performance.now();
    const health = await fetch(`${s.url}/healthz`);
    const list = await fetch(`${s.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${key}` } });
    const readsTook = performance.now() - t0;
    assert.equal(health.status, 200);
    assert.equal(list.status, 200);
    assert.equal(createdAt, undefined, 'the create is still waiting');
    // busy_timeout is 5 s: in one thread, the reads would have waited for the create's lock wait.
    assert.ok(readsTook < 1_000, `reads took ${readsTook} ms while a write waited`);
    other.prepare('COMMIT').run();
    const created = await create;
    assert.equal(created.status, 201);
    const { recording } = (await created.json()) as { recording: { id: string } };
    // Read your write: the main thread's connection sees the commit the answer reported.
    assert.equal((await fetch(`${s.url}/api/v2/recordings/${recording.id}`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
  });

  it('writes waiting for the thread are bounded in number and bytes: past either, a write is refused at once (503, nothing saved), and the waiting ones complete', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    const thread = s.server.writerThread!;
    await thread.ready;
    thread.limits = { writes: 2, bytes: 3_000 };
    const other = openSqlite(s.server.services.core.config.db);
    t.after(() => other.close());
    other.prepare('BEGIN IMMEDIATE').run();
    const create = (k: string, transcript: string) =>
      fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': k }), body: JSON.stringify({ type: 'clip', transcript }) });
    const waiting = [create('q1', 'a'.repeat(2_000)), create('q2', 'waits too')];
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    const refused = await create('q3', 'one too many');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(((await refused.json()) as { error: { message: string } }).error.message, /2 writes .* waiting .*nothing was saved/);
    assert.ok(performance.now() - t0 < 1_000, 'at once, not after the lock wait');
    other.prepare('COMMIT').run();
    assert.deepEqual((await Promise.all(waiting)).map((r) => r.status), [201, 201]);
    // Bytes: one large write waits, a second that would pass the byte bound is refused.
    other.prepare('BEGIN IMMEDIATE').run();
    const large = create('b1', 'b'.repeat(2_500));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await create('b2', 'c'.repeat(1_000))).status, 503);
    other.prepare('COMMIT').run();
    assert.equal((await large).status, 201);
    assert.equal((await create('q3', 'one too many')).status, 201, 'taken again once the others are written');
  });

  it('a thread that can never start again (its database file replaced) is restarted less and less often, not every second', { timeout: 20_000 }, async (t) => {
    const s = await serveInProcess(t);
    const thread = s.server.writerThread!;
    await thread.ready;
    const internals = thread as unknown as { data: { file: { dev: number; ino: number } }; thread: { terminate(): Promise<number> }; hooks: { log(line: string): void } };
    const lines: Array<{ at: number; line: string }> = [];
    internals.hooks.log = (line) => lines.push({ at: performance.now(), line });
    // What a start finds when the file was replaced under the server: another file at the path.
    internals.data.file = { ...internals.data.file, ino: internals.data.file.ino + 1_000_000 };
    const t0 = performance.now();
    await internals.thread.terminate();
    while (performance.now() - t0 < 4_500) await new Promise((r) => setTimeout(r, 100));
    const exits = lines.filter((l) => /exited/.test(l.line));
    // Restarts after 1 s, then 1, 2, 4 s...: three exits in 4.5 s (every second: five).
    assert.ok(exits.length >= 2 && exits.length <= 3, lines.map((l) => l.line).join('\n'));
    assert.match(exits[exits.length - 1]!.line, /in \d+ s \(\d+ starts in a row failed\)/);
  });

  it('the thread starts a little after the server; a write that arrives first starts it and is answered', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    const thread = s.server.writerThread!;
    assert.equal(thread.running, false, 'the first answers of a starting server do not share the core with the thread\'s start');
    const health = await fetch(`${s.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(thread.running, false, 'a read does not start it');
    const created = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'e1' }), body: JSON.stringify({ type: 'clip', transcript: 'before the thread' }) });
    assert.equal(created.status, 201, await created.clone().text());
    assert.ok(thread.running, 'the write started the thread');
    assert.ok((await thread.ready).length, 'and its background work runs');
    const { recording } = (await created.json()) as { recording: { id: string } };
    assert.equal((await fetch(`${s.url}/api/v2/recordings/${recording.id}`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
  });

  it('with no write, the thread starts on its own shortly after the server', async (t) => {
    const s = await serveInProcess(t);
    assert.ok((await s.server.writerThread!.ready).length, 'the background work runs without a write to start it');
  });

  it('answers a forwarded write exactly as in process: the request id, the rate-limit headers, errors in the envelope', async (t) => {
    const s = await serveInProcess(t, { rateLimit: 50 });
    const { key } = s.account();
    const ok = await fetch(`${s.url}/api/v2/recordings`, {
      method: 'POST',
      headers: json(key, { 'idempotency-key': 'h1', 'x-request-id': 'client-chosen-1' }),
      body: JSON.stringify({ type: 'memo', title: 'Standup', transcript: 'notes' }),
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.headers.get('x-request-id'), 'client-chosen-1');
    assert.equal(ok.headers.get('ratelimit-limit'), '50');
    assert.equal(ok.headers.get('ratelimit-remaining'), '49');
    assert.match(ok.headers.get('location') ?? '', /^\/api\/v2\/recordings\/rec_/);
    assert.equal(ok.headers.get('etag'), '"1"');
    // The same request again: the writer's idempotency answers the same recording.
    const again = await fetch(`${s.url}/api/v2/recordings`, {
      method: 'POST',
      headers: json(key, { 'idempotency-key': 'h1' }),
      body: JSON.stringify({ type: 'memo', title: 'Standup', transcript: 'notes' }),
    });
    assert.equal(((await again.json()) as { recording: { id: string } }).recording.id, ((await ok.json()) as { recording: { id: string } }).recording.id);
    assert.equal(again.headers.get('ratelimit-remaining'), '48', 'every forwarded write is counted once, here');
    // The key again with another body: the thread refuses it after the direct route took its
    // rate limit; the take is given back and the app answers the thread's error, counted once.
    const conflict = await fetch(`${s.url}/api/v2/recordings`, {
      method: 'POST',
      headers: json(key, { 'idempotency-key': 'h1', 'x-request-id': 'client-chosen-2' }),
      body: JSON.stringify({ type: 'memo', title: 'Standup', transcript: 'other notes' }),
    });
    assert.equal(conflict.status, 409);
    assert.equal(((await conflict.json()) as { error: { code: string } }).error.code, 'idempotency_conflict');
    assert.equal(conflict.headers.get('x-request-id'), 'client-chosen-2');
    assert.equal(conflict.headers.get('ratelimit-remaining'), '47', 'a refused create is counted once');
    const listed = await fetch(`${s.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(((await listed.json()) as { recordings: unknown[] }).recordings.length, 1, 'the refused create wrote nothing');

    const bad = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'h2' }), body: '{"type":"tape"}' });
    assert.equal(bad.status, 400);
    const error = (await bad.json()) as { error: { code: string; message: string } };
    assert.equal(error.error.code, 'invalid_request');
    assert.match(error.error.message, /^body\.type/);
    assert.match(bad.headers.get('x-request-id') ?? '', /^req_/);

    const huge = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'h3' }), body: JSON.stringify({ type: 'clip', transcript: 'x'.repeat(1_600_000) }) });
    assert.equal(huge.status, 413);
    assert.equal(((await huge.json()) as { error: { code: string } }).error.code, 'payload_too_large');

    const nobody = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(nobody.status, 401);
  });

  it('a create runs on the thread as a service call: concurrent creates committed together each get their own answer, a refusal its own envelope', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    await s.server.writerThread!.ready;
    const first = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'k0' }), body: JSON.stringify({ type: 'clip', transcript: 'the first' }) });
    assert.equal(first.status, 201);
    // 40 at once: the main thread hands them over in one message and they share group commits;
    // one of them reuses k0 with another body (refused on the thread: 409), one repeats k0 (replayed).
    const bodies = Array.from({ length: 40 }, (_, i) => ({ key: i === 7 ? 'k0' : `k${i + 1}`, transcript: i === 7 ? 'not the first' : `note ${i}` }));
    bodies.push({ key: 'k0', transcript: 'the first' });
    const answers = await Promise.all(
      bodies.map(async (b) => {
        const r = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': b.key, 'x-request-id': `id-${b.key}-${b.transcript.length}` }), body: JSON.stringify({ type: 'clip', transcript: b.transcript }) });
        return { status: r.status, requestId: r.headers.get('x-request-id'), replayed: r.headers.get('idempotent-replayed'), location: r.headers.get('location'), body: (await r.json()) as { recording?: { id: string; transcript: string }; error?: { code: string; message: string } } };
      }),
    );
    const ids = new Set<string>();
    answers.forEach((a, i) => {
      const b = bodies[i]!;
      assert.equal(a.requestId, `id-${b.key}-${b.transcript.length}`);
      if (i === 7) {
        assert.equal(a.status, 409);
        assert.equal(a.body.error?.code, 'idempotency_conflict');
        return;
      }
      assert.equal(a.status, b.key === 'k0' ? 200 : 201);
      assert.equal(a.replayed, b.key === 'k0' ? 'true' : null);
      assert.equal(a.body.recording?.transcript, b.transcript, `answer ${i} is its own request's`);
      assert.equal(a.location, `/api/v2/recordings/${a.body.recording!.id}`);
      if (b.key !== 'k0') ids.add(a.body.recording!.id);
    });
    assert.equal(ids.size, 39);
  });

  it('a v1 create takes the same call: its own answer shape and headers, a replay and a conflict', async (t) => {
    const s = await serveInProcess(t, { rateLimit: 50 });
    const { key } = s.account();
    const post = (idem: string, body: unknown) => fetch(`${s.url}/api/v1/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': idem }), body: JSON.stringify(body) });
    const created = await post('v1', { kind: 'clip', transcript: 'from an old app' });
    assert.equal(created.status, 200);
    const { recording } = (await created.json()) as { recording: { id: string; kind: string; transcript: string } };
    assert.equal(recording.kind, 'clip');
    assert.equal(recording.transcript, 'from an old app');
    assert.equal(created.headers.get('location'), `/api/v1/recordings/${recording.id}`);
    assert.equal(created.headers.get('etag'), '"1"');
    assert.equal(created.headers.get('ratelimit-remaining'), '49');
    const replay = await post('v1', { kind: 'clip', transcript: 'from an old app' });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await replay.json()) as { recording: { id: string } }).recording.id, recording.id);
    const conflict = await post('v1', { kind: 'clip', transcript: 'another text' });
    assert.equal(conflict.status, 409);
    assert.equal(((await conflict.json()) as { error: { code: string } }).error.code, 'idempotency_conflict');
    assert.equal(conflict.headers.get('ratelimit-remaining'), '47');
  });

  it('calls that commit as the thread is told to close are answered, not dropped', async (t) => {
    const s = await serveInProcess(t);
    const account = s.account();
    const thread = s.server.writerThread!;
    await thread.ready;
    const principal: Principal = { accountId: account.id, kind: 'key', credentialId: 'key_x', integrationId: 'int_x', permissions: new Set(PERMISSIONS) };
    // The calls wait for the write lock, which is freed right after close() is sent: they commit in
    // the turn the thread handles the close in.
    const other = openSqlite(s.server.services.core.config.db);
    other.prepare('BEGIN IMMEDIATE').run();
    const calls = [1, 2, 3].map((i) => thread.call('createRecording', principal, { type: 'clip', transcript: `t${i}` }, `k${i}`));
    await new Promise((r) => setTimeout(r, 300));
    const closed = thread.close();
    other.prepare('COMMIT').run();
    other.close();
    const results = await Promise.allSettled(calls);
    await closed;
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled']);
    const saved = s.server.services.core.db.prepare("SELECT count(*) AS n FROM recordings WHERE transcript IN ('t1', 't2', 't3')").get() as { n: number };
    assert.equal(saved.n, 3);
  });

  it('a session cookie write is checked against the Origin and answered with the cookie sign-in sets', async (t) => {
    const s = await serveInProcess(t);
    s.account('correct horse battery');
    const signIn = await fetch(`${s.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', origin: s.url }, body: JSON.stringify({ account: 'observer', password: 'correct horse battery' }) });
    assert.equal(signIn.status, 200, await signIn.clone().text());
    const cookie = signIn.headers.getSetCookie().find((c) => c.startsWith('reclib_session='));
    assert.ok(cookie, 'the writer thread\'s Set-Cookie reaches the client');
    const session = cookie.split(';')[0]!;
    const crossSite = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { cookie: session, origin: 'https://evil.example', 'content-type': 'application/json', 'idempotency-key': 'c1' }, body: '{"type":"clip"}' });
    assert.equal(crossSite.status, 403);
    const sameSite = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { cookie: session, origin: s.url, 'content-type': 'application/json', 'idempotency-key': 'c1' }, body: '{"type":"clip","transcript":"from the web app"}' });
    assert.equal(sameSite.status, 201);
  });

  it('the thread says after each commit that the file changed; a thread that dies is started again, and writes get 503 (and /healthz says why) until it is back', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    const thread = s.server.writerThread!;
    await thread.ready;
    let commits = 0;
    const hooks = (thread as unknown as { hooks: { committed(): void } }).hooks;
    const committed = hooks.committed;
    hooks.committed = () => {
      commits++;
      committed();
    };
    const r = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'd1' }), body: '{"type":"clip","transcript":"one"}' });
    assert.equal(r.status, 201);
    for (let i = 0; i < 100 && commits === 0; i++) await new Promise((res) => setTimeout(res, 10));
    assert.ok(commits >= 1, 'a commit message arrived');

    // A thread that dies (terminated here while idle: inside SQLite, that would take the process
    // down) is started again; meanwhile writes are refused with a 503 that says to retry.
    await (thread as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
    const cut = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'd2' }), body: '{"type":"clip","transcript":"two"}' });
    assert.equal(cut.status, 503);
    assert.equal(cut.headers.get('retry-after'), '1');
    assert.equal(((await cut.json()) as { error: { code: string } }).error.code, 'unavailable');
    // /healthz says so meanwhile (the process is alive: 200), and is plain again once it is back.
    const down = await fetch(`${s.url}/healthz`);
    assert.equal(down.status, 200);
    const downBody = (await down.json()) as { status: string; writes?: string; writeError?: string; failingSince?: number };
    assert.deepEqual({ ...downBody, failingSince: typeof downBody.failingSince }, { status: 'ok', writes: 'failing', writeError: 'writer_stopped', failingSince: 'number' });
    let again: Response | undefined;
    for (let i = 0; i < 100; i++) {
      again = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: json(key, { 'idempotency-key': 'd2' }), body: '{"type":"clip","transcript":"two"}' });
      if (again.status !== 503) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(again?.status, 201, 'the restarted thread takes the retry');
    assert.deepEqual(await (await fetch(`${s.url}/healthz`)).json(), { status: 'ok' });
  });

  /**
   * A server whose writer thread is ready, with the main thread's "writes work again" lines
   * captured, and a key not used yet: its first use is written on the main thread (key-uses.ts).
   * `useKey` uses it and checks that the write happened.
   */
  async function mainThreadWrite(t: TestContext) {
    const s = await serveInProcess(t);
    const { key } = s.account();
    const thread = s.server.writerThread!;
    await thread.ready;
    const logged: string[] = [];
    const health = s.server.services.core.writer.health;
    const log = health.log;
    health.log = (line) => logged.push(line);
    t.after(() => (health.log = log));
    const useKey = async () => {
      assert.equal((await fetch(`${s.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
      assert.ok(s.server.services.auth.keyUses.flush(), 'the key\'s use was written on the main thread');
    };
    const healthz = async () => (await fetch(`${s.url}/healthz`)).json();
    return { s, internals: thread as unknown as { thread: { terminate(): Promise<number> }; received(m: FromWriter): void }, logged, useKey, healthz };
  }

  it('while the thread is down, a write of the main thread\'s own (a key\'s last use) does not clear /healthz\'s writer_stopped', async (t) => {
    const { internals, logged, useKey, healthz } = await mainThreadWrite(t);
    await internals.thread.terminate();
    await useKey();
    const down = (await healthz()) as { writeError?: string };
    assert.equal(down.writeError, 'writer_stopped', 'the writer thread is still down');
    assert.deepEqual(logged, [], 'no "writes work again" while they do not');
  });

  it('a full disk the writer thread reports stays on /healthz through a write of the main thread\'s own, until that thread says writes work', async (t) => {
    const { internals, logged, useKey, healthz } = await mainThreadWrite(t);
    const since = Date.now();
    internals.received({ type: 'health', status: { failing: 'disk_full', since } });
    const failing = { status: 'ok', writes: 'failing', writeError: 'disk_full', failingSince: since };
    await useKey();
    assert.deepEqual(await healthz(), failing, 'the writer thread\'s disk is still full as far as anyone knows');
    assert.deepEqual(logged, [], 'no "writes work again" from the main thread');
    internals.received({ type: 'health', status: undefined });
    assert.deepEqual(await healthz(), { status: 'ok' });
  });

  it('a restarted thread\'s storage condition reported before it is ready stays on /healthz', async (t) => {
    const s = await serveInProcess(t);
    const thread = s.server.writerThread!;
    await thread.ready;
    const internals = thread as unknown as { thread: { terminate(): Promise<number> }; received(m: FromWriter): void };
    await internals.thread.terminate();
    for (let i = 0; i < 100 && s.server.services.core.writer.health.status?.failing !== 'writer_stopped'; i++) await new Promise((res) => setTimeout(res, 10));
    assert.equal(s.server.services.core.writer.health.status?.failing, 'writer_stopped');
    // What a new thread posts when the scheduler's first claim, in its start, finds the disk full.
    const since = Date.now();
    internals.received({ type: 'health', status: { failing: 'disk_full', since } });
    internals.received({ type: 'ready', workers: [] });
    assert.deepEqual(await (await fetch(`${s.url}/healthz`)).json(), { status: 'ok', writes: 'failing', writeError: 'disk_full', failingSince: since });
  });
});
