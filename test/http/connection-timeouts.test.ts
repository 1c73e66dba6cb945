// Connections are bounded in time, so idle and half-sent requests cannot hold sockets (Node's
// defaults let them live ~86 s): headers must arrive within --headers-timeout-ms, a kept-alive
// connection with no next request is closed after --keep-alive-timeout-ms, and one on which nothing
// moves either way (a client that stopped reading an answer) after --idle-timeout-ms. Short
// settings here; Node checks the first two every second.
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config';
import { harness } from '../helpers/harness';
import { listening } from '../helpers/node-server';

// The idle timeout is long here so that it does not end the header tests first.
const TIMEOUTS = { headersTimeoutMs: 500, requestTimeoutMs: 500, keepAliveTimeoutMs: 300, idleTimeoutMs: 5_000 };

/** Connects, sends `bytes`, and resolves with what came back and when the server closed (ms after connecting). */
function exchange(port: number, bytes: string): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (b: Buffer) => (text += b.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    socket.write(bytes);
    setTimeout(() => reject(new Error(`still open after 10 s; got ${text.slice(0, 200)}`)), 10_000).unref();
  });
}

describe('connection timeouts', () => {
  it('--request-timeout-ms below --headers-timeout-ms is refused (the headers are part of the request)', () => {
    assert.throws(() => loadConfig({ headersTimeoutMs: '20000', requestTimeoutMs: '10000' }, {}), /request-timeout-ms/);
  });

  it('a connection that sends half its headers and stops is answered 400 and closed once the headers time out', async () => {
    const { port, close } = await listening(harness().app.fetch, TIMEOUTS);
    try {
      const res = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      assert.match(res.text, /^HTTP\/1\.1 400/);
      assert.match(res.text, /not received completely in time/);
      assert.ok(res.closedAfterMs >= 450 && res.closedAfterMs < 2_500, `closed after ${res.closedAfterMs} ms`);
    } finally {
      await close();
    }
  });

  it('a kept-alive connection with no next request is closed after the keep-alive timeout', async () => {
    const { port, close } = await listening(harness().app.fetch, TIMEOUTS);
    try {
      const res = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(res.text, /^HTTP\/1\.1 200/);
      assert.ok(res.closedAfterMs >= 250 && res.closedAfterMs < 4_000, `closed after ${res.closedAfterMs} ms`);
    } finally {
      await close();
    }
  });

  it('a connection on which nothing moves either way (an answer that stalls, a client that stopped reading) is closed after the idle timeout', async () => {
    // An answer that starts and then never sends another byte: nothing moves either way.
    const stalled = () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"recordings":[')) }));
    const { server, port, close } = await listening(stalled, { ...TIMEOUTS, idleTimeoutMs: 600 });
    try {
      const closed = exchange(port, 'GET /anything HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await new Promise<number>((r) => server.getConnections((_e, n) => r(n))), 1, 'open within the idle timeout');
      const res = await closed;
      assert.match(res.text, /^HTTP\/1\.1 200/);
      assert.ok(res.closedAfterMs >= 550 && res.closedAfterMs < 3_000, `closed after ${res.closedAfterMs} ms`);
      assert.equal(await new Promise<number>((r) => server.getConnections((_e, n) => r(n))), 0);
    } finally {
      await close();
    }
  });
});
