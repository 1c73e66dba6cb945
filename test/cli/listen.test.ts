// `reclib listen` (docs/decisions.md §10), run from the bundle against a listening server: each event is
// POSTed to --forward-to signed so that the standardwebhooks and stripe verifiers accept it, one
// line per forward, a dropped stream resumed without loss or repeat, exit 0 on SIGINT/SIGTERM,
// exit 2 without RECLIB_API_KEY.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { BUNDLE, cleanEnv, ensureBundle, ROOT, runCli } from '../helpers/bundle';
import { harness, type Harness } from '../helpers/harness';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { created, patch } from '../helpers/recording-client';
import { listening } from '../helpers/sse-client';
import { waitFor } from '../helpers/wait';

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface Listener {
  child: ChildProcess;
  lines: string[];
  stderr(): string;
  /** Resolves when stdout has n lines. */
  lines$(n: number): Promise<void>;
  exit: Promise<number | null>;
}

function startListen(args: string[], key: string): Listener {
  ensureBundle();
  const child = spawn(process.execPath, [BUNDLE, 'listen', ...args], { cwd: ROOT, env: cleanEnv({ RECLIB_API_KEY: key }) });
  const lines: string[] = [];
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const parts = out.split('\n');
    out = parts.pop() ?? '';
    lines.push(...parts);
    for (const w of [...waiters]) w();
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  return {
    child,
    lines,
    stderr: () => err,
    exit,
    lines$: (n) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`listen printed ${lines.length} lines, not ${n}: ${lines.join('\n')}\nstderr: ${err}`)), 10_000);
        const check = () => {
          if (lines.length < n) return;
          clearTimeout(timer);
          resolve();
        };
        waiters.push(check);
        check();
      }),
  };
}

async function setup(): Promise<{ h: Harness; port: number; receiver: Receiver; key: string; drop(): void }> {
  const h = harness({ rateLimit: 0 });
  const srv = await listening(h.app.fetch);
  const receiver = await startReceiver();
  cleanups.push(srv.close, receiver.close);
  return { h, port: srv.port, receiver, key: h.key(), drop: () => srv.server.closeAllConnections() };
}

describe('reclib listen', () => {
  it('forwards each event signed for both verifiers, one JSON line each, resumes after a drop without loss or repeat, exits 0 on SIGINT', async () => {
    const { h, port, receiver, key, drop } = await setup();
    const l = startListen(['--url', `http://127.0.0.1:${port}`, '--forward-to', receiver.url, '--events', 'recording.created,recording.transcript_ready', '--json'], key);
    await l.lines$(1);
    const { secret } = JSON.parse(l.lines[0]!);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await waitFor(() => h.services.eventHub.size === 1, 'listen connected');

    const a = await created(h, key, { type: 'memo', title: 'a', transcript: 'buy milk' });
    await patch(h, key, a.id, { title: 'a2' }, '"1"'); // recording.updated: not in --events
    await receiver.waitForRequests(2);
    drop(); // the stream connection goes; listen reconnects with Last-Event-ID
    await waitFor(() => h.services.eventHub.size === 0, 'the stream dropped');
    const b = await created(h, key, { type: 'clip', title: 'b' }); // while disconnected
    await waitFor(() => h.services.eventHub.size === 1, 'listen reconnected');
    const c = await created(h, key, { type: 'clip', title: 'c' });
    await receiver.waitForRequests(4);
    await l.lines$(5);

    const feed = (await h.req('GET', '/api/v2/events?limit=100', { token: key })).json.events as Array<{ id: string; type: string; recordingId: string }>;
    const wanted = feed.filter((e) => e.type !== 'recording.updated');
    assert.deepEqual(wanted.map((e) => e.recordingId), [a.id, a.id, b.id, c.id]);
    await new Promise((resolve) => setTimeout(resolve, 200)); // nothing more arrives (no repeat)
    assert.equal(receiver.requests.length, 4);
    receiver.requests.forEach((req, i) => {
      const item = wanted[i]!;
      assert.equal(req.body, JSON.stringify(item), 'the body is the feed item exactly');
      const headers = req.headers as Record<string, string>;
      assert.deepEqual(new Webhook(secret).verify(req.body, headers), item);
      assert.equal(Stripe.webhooks.constructEvent(req.body, headers['service-signature']!, secret, 300).id, item.id);
      assert.equal(headers['webhook-id'], item.id);
    });
    const printed = l.lines.slice(1).map((line) => JSON.parse(line));
    assert.deepEqual(
      printed.map((p) => [p.eventId, p.type, p.recordingId, p.status]),
      wanted.map((e) => [e.id, e.type, e.recordingId, 200]),
    );
    assert.ok(printed.every((p) => typeof p.ms === 'number' && p.ms >= 0));
    assert.match(l.stderr(), /resuming after event \d+/);

    l.child.kill('SIGINT');
    assert.equal(await l.exit, 0);
  });

  it('after a restore (the feed behind the last id forwarded) it says so and follows from the newest event, not waiting for ids it has seen', async () => {
    const { h, port, receiver, key, drop } = await setup();
    const l = startListen(['--url', `http://127.0.0.1:${port}`, '--forward-to', receiver.url, '--events', 'recording.created', '--json'], key);
    await l.lines$(1);
    await waitFor(() => h.services.eventHub.size === 1, 'listen connected');
    await created(h, key, { type: 'memo', title: 'before' });
    await created(h, key, { type: 'memo', title: 'lost in the restore' });
    await receiver.waitForRequests(2);
    // The database goes back to a backup taken after the first recording: its later events are gone.
    const { db } = h.services.core;
    db.prepare('DELETE FROM events WHERE seq > (SELECT min(seq) FROM events)').run();
    db.prepare("DELETE FROM sqlite_sequence WHERE name = 'events'").run();
    drop();
    await waitFor(() => l.stderr().includes('following from its newest event instead'), 'listen gave up resuming');
    assert.match(l.stderr(), /the server refused to resume after event \d+ \(400\): Last-Event-ID \d+ is after the newest event/);
    await waitFor(() => h.services.eventHub.size === 1, 'listen reconnected');
    const after = await created(h, key, { type: 'memo', title: 'after the restore' });
    await receiver.waitForRequests(3);
    assert.equal(JSON.parse(receiver.requests[2]!.body).recordingId, after.id);
    assert.equal(l.child.exitCode, null, 'still running');
    l.child.kill('SIGTERM');
    assert.equal(await l.exit, 0);
  });

  it('another 400 on resuming (a proxy\'s, not the feed\'s refusal) ends it (exit 1) instead of following from the newest event', async () => {
    const { h, port, receiver, key } = await setup();
    // A proxy that passes the first stream through, drops it on cue, and refuses every later request with its own 400.
    let streams = 0;
    const drops: Array<() => void> = [];
    const proxy = http.createServer((req, res) => {
      if (streams++ > 0) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Request');
        return;
      }
      const up = http.request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers).flushHeaders();
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      drops.push(() => {
        up.destroy();
        res.destroy();
      });
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => void proxy.close());
    const proxyPort = (proxy.address() as AddressInfo).port;
    const l = startListen(['--url', `http://127.0.0.1:${proxyPort}`, '--forward-to', receiver.url, '--events', 'recording.created', '--json'], key);
    await l.lines$(1);
    await waitFor(() => h.services.eventHub.size === 1, 'listen connected');
    await created(h, key, { type: 'memo', title: 'forwarded' });
    await receiver.waitForRequests(1);
    for (const drop of drops) drop();
    await waitFor(() => l.child.exitCode !== null, () => `listen to exit; its stderr: ${l.stderr()}`);
    assert.equal(await l.exit, 1);
    assert.match(l.stderr(), /the server refused the stream \(400\): Bad Request/);
    assert.doesNotMatch(l.stderr(), /following from its newest event/);
    assert.equal(streams, 2, 'one refused reconnection, not a retry loop');
  });

  it('prints the secret once and a text line per forward (status, type, recording id, ms); a refused forward is a line too; SIGTERM exits 0', async () => {
    const { h, port, receiver, key } = await setup();
    receiver.answer = () => 500;
    const l = startListen(['--url', `http://127.0.0.1:${port}/`, '--forward-to', receiver.url], key);
    await waitFor(() => h.services.eventHub.size === 1, 'listen connected');
    const a = await created(h, key, { type: 'memo', title: 'a' });
    await l.lines$(3);
    assert.match(l.lines[1]!, /^Signing secret \(shown once; verify the forwarded requests with it\): whsec_\S+$/);
    assert.match(l.lines[2]!, new RegExp(`^500 recording\\.created ${a.id} \\d+ ms$`));
    l.child.kill('SIGTERM');
    assert.equal(await l.exit, 0);
  });

  it('without RECLIB_API_KEY, or with an unknown event type, exits 2 saying what is wrong; a refused key exits 1', async () => {
    const missing = await runCli(['listen', '--url', 'http://127.0.0.1:9', '--forward-to', 'http://127.0.0.1:9/hook']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /RECLIB_API_KEY is not set/);
    const badType = await runCli(['listen', '--url', 'http://127.0.0.1:9', '--forward-to', 'http://127.0.0.1:9/hook', '--events', 'recording.made'], { env: { RECLIB_API_KEY: 'rlk_x' } });
    assert.equal(badType.code, 2);
    assert.match(badType.stderr, /--events: recording\.made/);
    const { port } = await setup();
    const refused = await runCli(['listen', '--url', `http://127.0.0.1:${port}`, '--forward-to', 'http://127.0.0.1:9/hook'], { env: { RECLIB_API_KEY: 'rlk_not_a_key' } });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refused RECLIB_API_KEY \(401\)/);
    // No secret for forwards that will never come.
    assert.equal(refused.stdout, '');
  });
});
