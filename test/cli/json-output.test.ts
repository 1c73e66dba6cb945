// Conformance: docs/decisions.md §2, the admin CLI of the built bundle. Every command takes --db and --json;
// with --json it prints exactly one JSON object on stdout (shapes below), without it friendly
// text; errors go to stderr with a non-zero exit code.
// Webhook URLs here name a public address literally (93.184.216.34): `webhooks create` resolves a
// hostname, and a CLI test must not depend on (or wait for) the machine's DNS.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { deriveWebhookSecret } from '../../src/delivery/signing';
import { BUNDLE, cleanEnv, ensureBundle, ROOT, runCli } from '../helpers/bundle';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-conf-cli-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const KEY_FIELDS = ['id', 'name', 'permissions', 'integrationId', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt'];

/** Runs a command with --json and checks stdout is exactly one line holding one JSON object. */
async function one(args: string[]): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- shapes checked by the callers
  const r = await runCli([...args, '--json']);
  assert.equal(r.code, 0, `reclib ${args.join(' ')}: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  assert.deepEqual([lines.length, lines[1]], [2, ''], `exactly one line on stdout: ${r.stdout}`);
  const value: unknown = JSON.parse(lines[0]!);
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), 'a JSON object');
  return value as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- see above
}

const secretOf = (file: string) => Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');

describe('docs/decisions.md §2: every command with --json prints exactly one JSON object', () => {
  const db = path.join(dir, 'shapes.db');

  it('accounts, sessions, keys, devices, webhooks and backup print the documented shapes', async () => {
    const created = await one(['accounts', 'create', '--db', db, '--name', 'owner']);
    const acc = created.account.id as string;
    assert.deepEqual(created, { account: { id: acc, name: 'owner' } });
    const accounts = await one(['accounts', 'list', '--db', db]);
    assert.deepEqual(Object.keys(accounts), ['accounts']);
    assert.deepEqual(accounts.accounts.map((a: Record<string, unknown>) => Object.keys(a)), [['id', 'name', 'createdAt']]);

    const session = await one(['sessions', 'create', '--db', db, '--account', acc, '--ttl-hours', '2']);
    assert.deepEqual(Object.keys(session), ['session']);
    assert.deepEqual(Object.keys(session.session), ['token', 'expiresAt']);
    assert.match(session.session.token, /^rls_[A-Za-z0-9]{43}$/);

    const key = await one(['keys', 'create', '--db', db, '--account', acc, '--name', 'k', '--permissions', 'recordings:read,events:read']);
    assert.deepEqual(Object.keys(key), ['key', 'secret']);
    assert.deepEqual(Object.keys(key.key), KEY_FIELDS);
    assert.match(key.secret, /^rlk_[A-Za-z0-9]{43}$/, 'rlk_ + at least 32 random bytes in base62');
    assert.equal(key.key.expiresAt - key.key.createdAt, 90 * 86_400_000, 'default expiry 90 days');
    const keys = await one(['keys', 'list', '--db', db, '--account', acc]);
    assert.deepEqual(Object.keys(keys), ['keys']);
    assert.deepEqual(Object.keys(keys.keys[0]), KEY_FIELDS);
    assert.equal(JSON.stringify(keys).includes('rlk_'), false, 'no secrets in the list');
    const revoked = await one(['keys', 'revoke', '--db', db, '--account', acc, key.key.id]);
    assert.deepEqual(Object.keys(revoked.key), KEY_FIELDS);
    assert.equal(typeof revoked.key.revokedAt, 'number');

    for (const model of ['ring', 'pin', 'pendant']) {
      const device = await one(['devices', 'add', '--db', db, '--account', acc, '--id', `${model}-1`, '--name', `My ${model}`, '--model', model]);
      assert.deepEqual(device, { device: { id: `${model}-1`, name: `My ${model}`, model } });
    }
    const devices = await one(['devices', 'list', '--db', db, '--account', acc]);
    assert.deepEqual(devices, {
      devices: [
        { id: 'ring-1', name: 'My ring', model: 'ring' },
        { id: 'pin-1', name: 'My pin', model: 'pin' },
        { id: 'pendant-1', name: 'My pendant', model: 'pendant' },
      ],
    });

    const hook = await one(['webhooks', 'create', '--db', db, '--account', acc, '--url', 'https://93.184.216.34/a', '--events', 'recording.created']);
    assert.deepEqual(Object.keys(hook), ['webhook', 'secret']);
    assert.deepEqual(Object.keys(hook.webhook), ['id', 'url', 'events', 'payloadMode', 'rules', 'status', 'createdAt']);
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ + standard base64 of 32 bytes');
    const hooks = await one(['webhooks', 'list', '--db', db, '--account', acc]);
    assert.deepEqual(hooks, { webhooks: [hook.webhook] });
    const disabled = await one(['webhooks', 'disable', '--db', db, '--account', acc, hook.webhook.id]);
    assert.deepEqual(disabled, { webhook: { ...hook.webhook, status: 'disabled' } });

    const to = path.join(dir, 'copies', 'copy.db');
    const backup = await one(['backup', '--db', db, '--to', to]);
    assert.deepEqual(Object.keys(backup), ['backup']);
    assert.equal(backup.backup.file, to);
    assert.equal(backup.backup.bytes, fs.statSync(to).size);
    const copied = await one(['devices', 'list', '--db', to, '--account', acc]);
    assert.deepEqual(copied, devices, 'the copy is a working database');
  });

  it('without --json the same commands print friendly text, not JSON', async () => {
    const r = await runCli(['accounts', 'list', '--db', db]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^id\s+name\s+createdAt\n/);
    const acc = (await one(['accounts', 'list', '--db', db])).accounts[0].id as string;
    const devices = await runCli(['devices', 'list', '--db', db, '--account', acc]);
    assert.match(devices.stdout, /^id\s+name\s+model\n/);
    assert.match(devices.stdout, /ring-1\s+My ring\s+ring/);
  });

  it('devices add refuses a model outside ring|pin|pendant and devices list an unknown account: stderr, non-zero exit, nothing on stdout', async () => {
    const acc = (await one(['accounts', 'list', '--db', db])).accounts[0].id as string;
    const model = await runCli(['devices', 'add', '--db', db, '--account', acc, '--id', 'x-1', '--name', 'X', '--model', 'watch', '--json']);
    assert.notEqual(model.code, 0);
    assert.equal(model.stdout, '');
    assert.match(model.stderr, /model must be one of ring, pin, pendant/);
    const unknown = await runCli(['devices', 'list', '--db', db, '--account', 'acc_unknown', '--json']);
    assert.notEqual(unknown.code, 0);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /account acc_unknown not found/);
  });
});

describe('docs/decisions.md §1: every setting is a flag — webhooks create takes the server master secret file', () => {
  it('with --master-secret-file the printed secret is derived from that file, as the server derives it', async () => {
    const db = path.join(dir, 'master.db');
    const master = path.join(dir, 'elsewhere', 'master.secret');
    const acc = (await one(['accounts', 'create', '--db', db, '--name', 'm'])).account.id as string;
    const made = await one(['webhooks', 'create', '--db', db, '--master-secret-file', master, '--account', acc, '--url', 'https://93.184.216.34/m', '--events', 'recording.created']);
    assert.equal(made.secret, deriveWebhookSecret(secretOf(master), made.webhook.id));
    assert.notEqual(made.secret, deriveWebhookSecret(secretOf(`${db}.secret`), made.webhook.id));
    const env = await runCli(['webhooks', 'create', '--db', db, '--account', acc, '--url', 'https://93.184.216.34/e', '--events', 'recording.created', '--json'], {
      env: { RECLIB_MASTER_SECRET_FILE: master },
    });
    const viaEnv = JSON.parse(env.stdout) as { webhook: { id: string }; secret: string };
    assert.equal(viaEnv.secret, deriveWebhookSecret(secretOf(master), viaEnv.webhook.id), 'the environment variable works too');
  });

  it('a malformed --webhook-allow on webhooks create is a configuration error (exit 2) naming the setting', async () => {
    const db = path.join(dir, 'allow.db');
    const acc = (await one(['accounts', 'create', '--db', db, '--name', 'a'])).account.id as string;
    const r = await runCli(['webhooks', 'create', '--db', db, '--account', acc, '--url', 'http://10.0.0.5/x', '--events', 'recording.created', '--webhook-allow', '10.0.0.0/99']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /webhook-allow/);
  });
});

describe('docs/decisions.md §2: reclib serve --json', () => {
  it('prints exactly one JSON object with its URL and the first-run commands; the shutdown line goes to stderr', async () => {
    ensureBundle();
    const db = path.join(dir, 'serve.db');
    const child = spawn(process.execPath, [BUNDLE, 'serve', '--db', db, '--port', '0', '--json'], { cwd: ROOT, env: cleanEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      for (let i = 0; i < 400 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 20));
      const printed = JSON.parse(out) as { serve: { url: string; firstRunHint: string | null } };
      assert.deepEqual(Object.keys(printed.serve), ['url', 'firstRunHint']);
      assert.match(printed.serve.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(printed.serve.firstRunHint ?? '', /accounts create --name \S+ --db /);
      assert.match(printed.serve.firstRunHint ?? '', /keys create --db \S+ --account <account id> --name \S+ --permissions /);
      assert.match(printed.serve.firstRunHint ?? '', /sessions create --db \S+ --account <account id>/);
      assert.equal((await fetch(`${printed.serve.url}/healthz`)).status, 200);
      child.kill('SIGTERM');
      assert.equal(await exited, 0, err);
      assert.equal(out.split('\n').filter(Boolean).length, 1, `one line on stdout: ${out}`);
      assert.match(err, /SIGTERM received/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
