// docs/decisions.md §1: SIGTERM under load. The server stops accepting, answers every
// request it received (on kept-alive connections with Connection: close, so the client does not
// send another on a closing socket), and exits 0: no client sees a reset. A client that
// half-closes its side after a complete request still gets the answer.
import assert from 'node:assert/strict';
import { testConfig } from '../../src/config';
import fs from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createNodeServer } from '../../src/http/node-server';
import { cliJson, startServe } from '../helpers/bundle';
import { serveInProcess } from '../helpers/in-process-server';

interface Tally {
  answered: number;
  closeAnswers: number;
  refused: number;
  resets: string[];
}

/** One request on the agent; sorts the result into answered, refused (after the listener closed) or reset. */
function send(agent: http.Agent, url: URL, key: string, n: number, tally: Tally): Promise<boolean> {
  const create = n % 3 === 0;
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        agent,
        method: create ? 'POST' : 'GET',
        path: create ? '/api/v2/recordings' : '/api/v2/recordings?limit=5',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(create ? { 'idempotency-key': `load-${n}` } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200 && res.statusCode !== 201) tally.resets.push(`status ${res.statusCode}`);
          tally.answered++;
          if (res.headers.connection === 'close') tally.closeAnswers++;
          resolve(true);
        });
        res.on('error', (e) => {
          tally.resets.push(`response: ${(e as NodeJS.ErrnoException).code ?? e.message}`);
          resolve(false);
        });
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNREFUSED') tally.refused++;
      else tally.resets.push(`${e.code ?? ''} ${e.message}`);
      resolve(false);
    });
    req.end(create ? JSON.stringify({ type: 'memo', transcript: `load ${n}` }) : undefined);
  });
}

describe('graceful stop', () => {
  it('SIGTERM under concurrent keep-alive load: zero resets, every received request answered, exit 0', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-stop-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'reclib.db');
    const server = await startServe(['--db', db, '--rate-limit', '0']);
    t.after(() => server.stop('SIGKILL'));
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'load']);
    const { secret: key } = await cliJson(['keys', 'create', '--db', db, '--account', account.id, '--name', 'load', '--permissions', 'recordings:create,recordings:read']);
    const url = new URL(server.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    t.after(() => agent.destroy());
    const tally: Tally = { answered: 0, closeAnswers: 0, refused: 0, resets: [] };
    let n = 0;
    let stopping = false;
    let exit: Promise<number | null> | undefined;
    // 16 clients in a loop; each stops at its first refused or failed request once the stop began.
    const clients = Array.from({ length: 16 }, async () => {
      for (;;) {
        const ok = await send(agent, url, key as string, n++, tally);
        if (!ok && (stopping || tally.resets.length > 0)) return;
        if (!stopping && tally.answered >= 300) {
          stopping = true;
          exit = server.stop('SIGTERM');
        }
      }
    });
    await Promise.all(clients);
    assert.equal(await exit, 0, server.stderr());
    assert.deepEqual(tally.resets, [], 'no request failed except by being refused after the stop');
    assert.ok(tally.answered >= 300);
    assert.ok(tally.closeAnswers > 0, 'kept-alive connections were told Connection: close');
    // Every request the server received was logged when answered, and every answer reached a client.
    const logged = server.stdout().split('\n').filter((l) => / \/api\/v2\/recordings (200|201) /.test(l)).length;
    assert.equal(logged, tally.answered);
    assert.match(server.stdout(), /reclib stopped/);
  });

  it('a client that half-closes after sending a complete request still gets its answer, even one that takes a while', async (t) => {
    // Node's default is to end the socket when the client's side ends, so an answer that is not
    // ready at that moment would be lost.
    const server = createNodeServer(async () => {
      await new Promise((r) => setTimeout(r, 50));
      return new Response('late answer');
    }, '127.0.0.1', testConfig());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.end('GET /slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /late answer$/);
  });

  it('a half-closed client gets the answer to a create (the app, over the server reclib runs)', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    const { port } = new URL(s.url);
    const body = JSON.stringify({ type: 'memo', transcript: 'half closed' });
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.end(
          `POST /api/v2/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nIdempotency-Key: half-1\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      });
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
    });
    assert.match(answer, /^HTTP\/1\.1 201 /);
    assert.match(answer, /"transcript":"half closed"/);
  });
});
