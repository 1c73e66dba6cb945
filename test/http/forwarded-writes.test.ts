// On `reclib serve` the main thread hands writes to the writer thread (src/http/forward-write.ts):
// what a client sees must be what one process answers (the suite's harness), and a write refused
// because the writer thread is away counts against no rate limit. Found by sending the same
// requests to both (docs/architecture.md, "The writer and its threads").
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { serveInProcess, type InProcessServer } from '../helpers/in-process-server';

const BIG = 'x'.repeat(1_600_000); // over the 1.5 MB body limit

async function created(served: InProcessServer, key: string, n: number): Promise<string> {
  const res = await fetch(`${served.url}/api/v2/recordings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `fw-${n}` },
    body: JSON.stringify({ type: 'clip', transcript: `note ${n}` }),
  });
  assert.equal(res.status, 201);
  return ((await res.json()) as { recording: { id: string } }).recording.id;
}

/** Sends `head` (request line and headers) on a raw connection and resolves with the status line, or 'timeout'. */
function raw(url: string, head: string, waitMs: number): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
    let got = '';
    const timer = setTimeout(() => (socket.destroy(), resolve('timeout')), waitMs);
    socket.on('data', (d: Buffer) => {
      got += d.toString();
      if (got.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(got.split('\r\n')[0]!);
      }
    });
    socket.on('error', () => undefined);
  });
}

describe('writes handed to the writer thread answer as in one process', () => {
  it('a route without a body reads none: a DELETE with a large body it ignores, or with one announced and never sent, is served', async (t) => {
    const served = await serveInProcess(t, { rateLimit: 0 });
    assert.ok(served.server.writerThread);
    const { key, session } = served.account();
    const id = await created(served, key, 1);
    const del = await fetch(`${served.url}/api/v2/recordings/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'if-match': '1' }, body: BIG });
    assert.equal(del.status, 204, await del.text());
    const mcp = await fetch(`${served.url}/mcp`, { method: 'DELETE', body: BIG });
    assert.equal(mcp.status, 405);
    assert.equal(mcp.headers.get('allow'), 'POST');
    // Content-Length: 10 and no body: answered at once (before, after the request timeout, 400).
    const other = await created(served, key, 2);
    const status = await raw(
      served.url,
      `DELETE /api/v2/recordings/${other} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nIf-Match: 1\r\nContent-Length: 10\r\n\r\n`,
      3_000,
    );
    assert.equal(status, 'HTTP/1.1 204 No Content');
    const signOut = await fetch(`${served.url}/api/session`, { method: 'DELETE', headers: { authorization: `Bearer ${session}` }, body: BIG });
    assert.equal(signOut.status, 204);
  });

  it('the path is checked before the body is read: a bad id is a 400 whatever the body', async (t) => {
    const served = await serveInProcess(t, { rateLimit: 0 });
    const { key } = served.account();
    const res = await fetch(`${served.url}/api/v2/recordings/bad!id`, { method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'if-match': '1' }, body: BIG });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /^path\.id: /);
  });
});

describe('a write refused because the writer thread is away counts against no rate limit', () => {
  it('503s leave the key and a sign-in budget as they were', async (t) => {
    const served = await serveInProcess(t, { rateLimit: 3 });
    const { id, key } = served.account('a long enough password');
    const writer = served.server.writerThread;
    assert.ok(writer);
    // What a restart looks like to a request: the thread is gone (here for good).
    await writer.close();
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    for (let i = 0; i < 4; i++) {
      const patch = await fetch(`${served.url}/api/v2/recordings/rec_nope`, { method: 'PATCH', headers: { ...auth, 'if-match': '1' }, body: '{"title":"t"}' });
      assert.equal(patch.status, 503, `write ${i}`);
      assert.equal(patch.headers.get('retry-after'), '1');
      const create = await fetch(`${served.url}/api/v2/recordings`, { method: 'POST', headers: { ...auth, 'idempotency-key': `k${i}` }, body: '{"type":"clip","transcript":"t"}' });
      assert.equal(create.status, 503, `create ${i}`);
      const signIn = await fetch(`${served.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account: id, password: 'a long enough password' }) });
      assert.equal(signIn.status, 503, `sign-in ${i}`);
    }
    // Twelve refused writes later, the key still has its 3 requests of the minute.
    const read = await fetch(`${served.url}/api/v2/recordings`, { headers: auth });
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('ratelimit-remaining'), '2');
  });
});

describe('the rate limiter gives back the entry it counted, not another request\'s', () => {
  it('giveBack(id, at) removes that entry while it is in the window, and nothing once it has left it', async () => {
    const { RateLimiter } = await import('../../src/http/rate-limit');
    let now = 1_000_000;
    const limiter = new RateLimiter({ now: () => now }, 2);
    const first = limiter.count('key_a');
    now += 61_000; // the first request waited longer than the window (a writer thread that was stuck)
    const second = limiter.count('key_a');
    assert.equal(second.headers?.['RateLimit-Remaining'], '1', 'the first left the window');
    limiter.giveBack('key_a', first.at);
    assert.equal(limiter.take('key_a')?.['RateLimit-Remaining'], '0', "the second's entry stayed");
    limiter.giveBack('key_a', second.at);
    assert.equal(limiter.full('key_a'), false, 'its own entry went');
  });
});
