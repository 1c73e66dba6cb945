// docs/decisions.md §6 (at-least-once delivery): the built server is killed with SIGKILL while deliveries are on the wire;
// restarted on the same database, it delivers every event that was committed before the crash.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { cliJson, startServe, type ServeProcess } from '../helpers/bundle';
import { startReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-crash-'));
const db = path.join(dir, 'reclib.db');
const servers: ServeProcess[] = [];
after(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

const SERVE_ARGS = [
  '--db', db,
  '--webhook-allow', '127.0.0.1',
  '--delivery-backoff-ms', '200',
  '--delivery-per-minute', '600',
  '--delivery-timeout-ms', '1000', // lease = 2 × timeout + 1 s: a crashed claim is retried after 3 s
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('kill -9 during delivery, restart on the same database: every committed event reaches the receiver at least once', async () => {
  // A slow receiver: each acknowledgement takes 400 ms, so requests are on the wire at the kill (and
  // still are when the kill has been noticed, on a loaded machine too).
  const receiver = await startReceiver(() => sleep(400).then(() => 200));
  after(() => receiver.close());
  const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'crash']);
  const { session } = await cliJson(['sessions', 'create', '--db', db, '--account', account.id]);
  // Three subscriptions: each has at most one delivery in flight (fair delivery), so with three
  // several requests are on the wire at the kill.
  for (let i = 0; i < 3; i++) {
    await cliJson(['webhooks', 'create', '--db', db, '--account', account.id, '--url', receiver.url, '--events', 'recording.created', '--webhook-allow', '127.0.0.1']);
  }

  const first = await startServe(SERVE_ARGS);
  servers.push(first);
  const created: string[] = [];
  let crashed = false;
  const creating = (async () => {
    for (let i = 0; i < 200 && !crashed; i++) {
      try {
        const res = await fetch(`${first.url}/api/v2/recordings`, {
          method: 'POST',
          headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json', 'idempotency-key': `crash-${i}` },
          body: JSON.stringify({ type: 'clip', transcript: `note ${i}` }),
        });
        if (res.status === 201) created.push(((await res.json()) as { recording: { id: string } }).recording.id);
        // Past a dozen, slowly: the kill waits for a delivery it can cut, and every recording
        // created meanwhile is three deliveries of 400 ms each to wait for after the restart.
        if (created.length >= 12) await sleep(100);
      } catch {
        return; // the server is gone: recordings not acknowledged do not count
      }
    }
  })();
  // Kill once a dozen recordings are committed and deliveries are on the wire: some acknowledged,
  // some cut mid-request, some still queued.
  // In flight means received whole, not yet answered, and far from its answer: received under
  // 200 ms ago, so 200 ms or more before the receiver's 400 ms are up. (A connection that has only
  // sent its headers may still be answered in the gap before the kill on a loaded machine, and so
  // may one received ~400 ms before it: its answer's timer can run before the killed process's
  // sockets are seen closed.)
  const cuttable = () => receiver.requests.some((r) => r.status === null && Date.now() - r.receivedAt < 200);
  await waitFor(() => created.length >= 12 && cuttable(), 'deliveries in flight', { timeoutMs: 8_000, everyMs: 25 });
  crashed = true;
  first.child.kill('SIGKILL');
  await first.stop();
  await creating;
  const answeredBeforeCrash = receiver.requests.filter((r) => r.status !== null).length;
  assert.ok(receiver.requests.length > answeredBeforeCrash, 'the kill cut requests on the wire');
  assert.ok(created.length * 3 > receiver.requests.length, 'the kill left queued deliveries unsent');

  const second = await startServe(SERVE_ARGS);
  servers.push(second);
  // Acknowledged deliveries only: a request cut by the crash does not count as delivered.
  const deliveredIds = () =>
    new Set(
      receiver.requests
        .filter((r) => r.status === 200)
        .map((r) => JSON.parse(r.body) as { type: string; recordingId: string })
        .filter((b) => b.type === 'recording.created')
        .map((b) => b.recordingId),
    );
  await waitFor(() => created.every((id) => deliveredIds().has(id)), 'every created recording to be delivered', { timeoutMs: 12_000, everyMs: 25 });
  assert.equal(await second.stop('SIGTERM'), 0);
});
