// src/http/graceful-close.ts: once the stop begins, every request already received or arriving on
// an open connection is answered, with Connection: close; idle connections close after the idle
// window; a connection is never destroyed under a request.
import assert from 'node:assert/strict';
import { testConfig } from '../../src/config';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { gracefulClose } from '../../src/http/graceful-close';
import { createNodeServer } from '../../src/http/node-server';
import { waitFor } from '../helpers/wait';

/** A raw keep-alive connection: send a request, read one whole answer (Content-Length framed). */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let closed = false;
  const waiters: Array<() => void> = [];
  socket.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  socket.on('close', () => {
    closed = true;
    for (const w of waiters.splice(0)) w();
  });
  socket.on('error', () => undefined);
  const answer = async (): Promise<string> => {
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(buffer.slice(0, end))?.[1] ?? NaN);
      if (end >= 0 && buffer.length >= end + 4 + length) {
        const whole = buffer.slice(0, end + 4 + length);
        buffer = buffer.slice(whole.length);
        return whole;
      }
      if (closed) throw new Error(`connection closed without an answer (got ${JSON.stringify(buffer)})`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return {
    socket,
    get closed() {
      return closed;
    },
    async request(path: string): Promise<string> {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      return answer();
    },
    send: (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
    answer,
    waitClosed: () => new Promise<void>((resolve) => (closed ? resolve() : socket.once('close', () => resolve()))),
  };
}

async function serve(t: { after(f: () => unknown): void }, idleMs: number) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let drain: ReturnType<typeof gracefulClose> | undefined;
  const server = createNodeServer(
    async (req) => {
      if (new URL(req.url).pathname === '/slow') await held;
      return new Response('ok');
    },
    '127.0.0.1',
    testConfig(),
    (req: IncomingMessage, res: ServerResponse) => drain?.observe(req, res),
  );
  drain = gracefulClose(server, idleMs);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.closeAllConnections());
  return { server, drain, port: (server.address() as AddressInfo).port, release };
}

describe('graceful close', () => {
  it('a request in flight when the stop begins is answered with Connection: close, then the connection closes', async (t) => {
    const { drain, port, release } = await serve(t, 5_000);
    const c = connection(port);
    assert.match(await c.request('/fast'), /Connection: keep-alive/i);
    c.send('/slow');
    await new Promise((r) => setTimeout(r, 50));
    const closed = drain.close(10_000);
    release();
    const answer = await c.answer();
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /Connection: close/i);
    await c.waitClosed();
    await closed;
  });

  it('a request arriving on an idle kept-alive connection after the stop began is answered (Connection: close), not reset', async (t) => {
    const { drain, port } = await serve(t, 300);
    const c = connection(port);
    assert.match(await c.request('/fast'), /Connection: keep-alive/i);
    const closed = drain.close(10_000);
    // The listener is closed: a new connection is refused.
    await assert.rejects(new Promise((resolve, reject) => net.connect(port, '127.0.0.1', () => resolve(undefined)).on('error', reject)), /ECONNREFUSED/);
    const answer = await c.request('/fast');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /Connection: close/i);
    await c.waitClosed();
    await closed;
  });

  it('an idle connection is closed after the idle window, and the stop completes then', async (t) => {
    const { drain, port } = await serve(t, 200);
    const c = connection(port);
    await c.request('/fast');
    const started = Date.now();
    await drain.close(10_000);
    assert.ok(Date.now() - started >= 150, 'not closed at once: a request may be on its way');
    assert.ok(Date.now() - started < 5_000);
    await c.waitClosed();
  });

  it('after the grace period what is left is destroyed, so a stuck request cannot hold the stop', async (t) => {
    const { drain, port } = await serve(t, 100);
    const c = connection(port);
    c.send('/slow'); // never released
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await drain.close(300);
    assert.ok(Date.now() - started < 2_000);
    await c.waitClosed();
  });

  it('answers queued behind a pending one (pipelined) are forgotten when the client goes away', async (t) => {
    const { drain, port, release } = await serve(t, 5_000);
    t.after(release);
    const c = connection(port);
    // Sent at once: the three behind /slow are answered after it, and hold no socket until then.
    c.socket.write(['/slow', '/a', '/b', '/c'].map((path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(''));
    await waitFor(() => drain.inFlight() === 4, () => `the 4 pipelined requests to reach the server (${drain.inFlight()} counted)`);
    // A reset (a plain end would leave the server's side half open: node-server.ts's httpAllowHalfOpen).
    c.socket.resetAndDestroy();
    // The server's side of the connection closes, then the answers' 'close' (a tick later).
    await waitFor(() => drain.inFlight() === 0, () => `no answer of the closed connection to be counted (${drain.inFlight()} still are)`, { timeoutMs: 2_000 });
    await drain.close(100);
  });
});
