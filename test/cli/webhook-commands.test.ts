// Webhook URLs here name a public address literally (93.184.216.34): `webhooks create` resolves a
// hostname, and a CLI test must not depend on (or wait for) the machine's DNS.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { deriveWebhookSecret } from '../../src/delivery/signing';
import { cliJson, runCli } from '../helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-wh-cli-'));
const db = path.join(dir, 'reclib.db');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('reclib webhooks create|list|disable', () => {
  test('create prints {"webhook":{…},"secret":"whsec_…"}; list and disable work on the same file', async () => {
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'cli']);
    const made = await cliJson(['webhooks', 'create', '--db', db, '--account', account.id, '--url', 'https://93.184.216.34/x', '--events', 'recording.created,recording.deleted']);
    assert.deepEqual(Object.keys(made).sort(), ['secret', 'webhook']);
    assert.deepEqual(made.webhook.events, ['recording.created', 'recording.deleted']);
    assert.equal(made.webhook.payloadMode, 'default');
    assert.equal(made.webhook.status, 'active');
    // The secret is derived from the master secret file beside the database, as the server does.
    const master = Buffer.from(fs.readFileSync(`${db}.secret`, 'utf8').trim(), 'base64');
    assert.equal(made.secret, deriveWebhookSecret(master, made.webhook.id));

    const ruled = await cliJson(['webhooks', 'create', '--db', db, '--account', account.id, '--url', 'https://93.184.216.34/todo', '--payload-mode', 'text', '--rule-prefix', 'Todo', '--rule-capture-input', 'hold', '--rule-kind', 'clip']);
    assert.deepEqual(ruled.webhook.events, ['recording.transcript_ready']);
    assert.deepEqual(ruled.webhook.rules, { prefix: 'Todo', captureInput: 'hold', kind: 'clip' });

    const listed = await cliJson(['webhooks', 'list', '--db', db, '--account', account.id]);
    assert.deepEqual(listed.webhooks.map((w: { id: string }) => w.id), [made.webhook.id, ruled.webhook.id]);
    assert.equal(JSON.stringify(listed).includes('whsec_'), false);
    // The table shows the rules (two text subscriptions to one receiver differ only there).
    const text = (await runCli(['webhooks', 'list', '--db', db, '--account', account.id])).stdout.split('\n');
    assert.match(text[0]!, /^id +url +events +payloadMode +rules +createdAt$/);
    assert.match(text.find((l) => l.startsWith(ruled.webhook.id))!, / text +prefix=Todo,captureInput=hold,kind=clip +\d{4}-/);
    assert.match(text.find((l) => l.startsWith(made.webhook.id))!, / default +- +\d{4}-/);

    const disabled = await cliJson(['webhooks', 'disable', '--db', db, '--account', account.id, made.webhook.id]);
    assert.equal(disabled.webhook.status, 'disabled');
    const after = await cliJson(['webhooks', 'list', '--db', db, '--account', account.id]);
    assert.deepEqual(after.webhooks.map((w: { id: string }) => w.id), [ruled.webhook.id]);
  });

  test('a rejected URL fails with the reason on stderr and a non-zero exit; --webhook-allow admits a home-network URL', async () => {
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'cli2']);
    const refused = await runCli(['webhooks', 'create', '--db', db, '--account', account.id, '--url', 'http://192.168.1.5:8123/hook', '--events', 'recording.created', '--json']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /url: must use https/);
    const allowed = await cliJson(['webhooks', 'create', '--db', db, '--account', account.id, '--url', 'http://192.168.1.5:8123/hook', '--events', 'recording.created', '--webhook-allow', '192.168.1.0/24']);
    assert.equal(allowed.webhook.url, 'http://192.168.1.5:8123/hook');
    const badEvent = await runCli(['webhooks', 'create', '--db', db, '--account', account.id, '--url', 'https://93.184.216.34/', '--events', 'recording.exploded']);
    assert.notEqual(badEvent.code, 0);
    assert.match(badEvent.stderr, /events\[0\]: unknown event type/);
  });
});
