// `reclib captures simulate` (docs/decisions.md §12): a native capture made as a device app makes it
// (metadata-only pending capture, then the transcript), so capture rules fire and the running
// server delivers them; unknown devices and inputs the device lacks exit 1 with a clear message.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqlite } from '../../src/db/sqlite';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { simulateCapture } from '../../src/services/capture-simulator';
import { runCli } from '../helpers/bundle';
import { feedTypes, v1Created, v1Put, withRing } from '../helpers/v1-client';
import { startReceiver } from '../helpers/receiver';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-simulate-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reclib captures simulate', () => {
  it('makes the same capture and the same events as a device app over v1 (pending, then the transcript)', async () => {
    const h = withRing();
    const app = await v1Created(h, h.session, { kind: 'clip', deviceId: 'ring-1', captureInput: 'doubleTap' });
    assert.equal((await v1Put(h, h.session, app.id, { transcript: 'note one' }, 1)).status, 200);
    const row = simulateCapture(h.services, { accountId: h.accountId, deviceId: 'ring-1', input: 'doubleTap', transcript: 'note two' });
    const viaApp = h.services.recordings.store.get(h.accountId, app.id)!;
    // doubleTap maps to memo: the input mapping decided the type, as for the app.
    for (const r of [viaApp, row]) {
      assert.deepEqual([r.type, r.native, r.status, r.revision, r.device_id, r.capture_input, r.integration_id], ['memo', 1, 'ready', 2, 'ring-1', 'doubleTap', viaApp.integration_id]);
    }
    assert.deepEqual(feedTypes(h, row.id), feedTypes(h, app.id));
    assert.deepEqual(feedTypes(h, row.id), ['recording.created@2', 'recording.transcript_ready@2']);
  });

  it('fires a text-mode capture rule end to end: the server delivers "todo buy milk" signed, with command "buy milk"', async () => {
    const receiver = await startReceiver();
    const db = path.join(dir, 'rule.db');
    const config = loadConfig({ db, port: '0', webhookAllow: '127.0.0.1' }, {});
    const running = await startServer(config, () => undefined);
    try {
      const s = running.services;
      const account = s.auth.createAccount('me', 'correct horse');
      s.devices.add(account.id, { id: 'ring-1', name: 'Ring', model: 'ring' });
      const { secret } = await s.webhooks.create(account.id, { url: receiver.url, payloadMode: 'text', rules: { prefix: 'todo', captureInput: 'hold' } });
      // Another process, as a developer would run it next to the server.
      // With the server's public URL, which text deliveries' fetchUrl is built on (the CLI writes them).
      const r = await runCli(['captures', 'simulate', '--db', db, '--account', account.id, '--device', 'ring-1', '--input', 'hold', '--transcript', 'todo buy milk', '--public-url', running.url, '--json']);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual([out.recording.type, out.recording.transcript, out.recording.status, out.recording.deviceId], ['clip', 'todo buy milk', 'ready', 'ring-1']);
      assert.deepEqual(out.deliveries.map((d: { trigger: string; type: string }) => [d.trigger, d.type]), [['rule', 'recording.transcript_ready']]);
      await receiver.waitForRequests(1, 10_000);
      const [got] = receiver.requests;
      const body = new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>) as Record<string, unknown>;
      assert.deepEqual([body.type, body.recordingId, body.transcript, body.command], ['recording.transcript_ready', out.recording.id, 'todo buy milk', 'buy milk']);
      assert.equal(body.fetchUrl, `${running.url}/api/v1/recordings/${out.recording.id}`);
      // Without it, the text output says which origin the fetchUrl has, and how to change it.
      const text = await runCli(['captures', 'simulate', '--db', db, '--account', account.id, '--device', 'ring-1', '--input', 'hold', '--transcript', 'todo call mum']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^text deliveries' fetchUrl: http:\/\/127\.0\.0\.1:8080\/api\/v1\/recordings\/rec_\w+ \(not the server's public URL\? pass it as --public-url\)$/m);
    } finally {
      await running.close();
      await receiver.close();
    }
  });

  it('an unknown device, or an input the device does not have, exits 1 naming it; nothing is created', async () => {
    const db = path.join(dir, 'errors.db');
    const made = JSON.parse((await runCli(['accounts', 'create', '--db', db, '--name', 'me', '--json'])).stdout);
    const account = made.account.id as string;
    assert.equal((await runCli(['devices', 'add', '--db', db, '--account', account, '--id', 'pin-1', '--name', 'Pin', '--model', 'pin'])).code, 0);
    const simulate = (device: string, input: string) => runCli(['captures', 'simulate', '--db', db, '--account', account, '--device', device, '--input', input, '--transcript', 'todo x']);
    const unknown = await simulate('ring-9', 'hold');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /device ring-9 not found/);
    const wrong = await simulate('pin-1', 'hold');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /hold is not an input of pin-1 \(a pin: recordButton, appRecord\)/);
    const recordings = () => {
      const file = openSqlite(db, { readonly: true });
      try {
        return file.prepare('SELECT count(*) FROM recordings').pluck().get();
      } finally {
        file.close();
      }
    };
    assert.equal(recordings(), 0);
    const ok = await simulate('pin-1', 'recordButton');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /captured rec_\S+: a memo from pin-1 \(recordButton\), ready/);
    assert.match(ok.stdout, /no capture rule fired/);
    assert.equal(recordings(), 1);
  });
});
