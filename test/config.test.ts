// docs/decisions.md §1: every setting is a flag and an environment variable, flags win, the defaults are
// the contract's, and a bad value stops the program with a clear message and exit code 2.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config';
import { parseAllowList } from '../src/delivery/destination-guard';
import { runCli } from './helpers/bundle';

describe('configuration: flags, environment, defaults', () => {
  it('the defaults are those of docs/decisions.md §1', () => {
    const c = loadConfig({}, {});
    assert.deepEqual(c, {
      db: './data/reclib.db',
      host: '127.0.0.1',
      port: 8080,
      publicUrl: undefined,
      webhookAllow: '',
      allowList: parseAllowList(''),
      deliveryBackoffMs: 60000,
      deliveryPerMinute: 20,
      deliveryConcurrency: 4,
      deliveryTimeoutMs: 5000,
      rateLimit: 120,
      masterSecretFile: './data/reclib.db.secret',
      headersTimeoutMs: 10000,
      requestTimeoutMs: 30000,
      keepAliveTimeoutMs: 5000,
      idleTimeoutMs: 60000,
      durability: 'full',
      metricsToken: undefined,
      logFormat: 'text',
      deliveries: 'on',
    });
  });

  it('every setting is read from its environment variable', () => {
    const c = loadConfig(
      {},
      {
        RECLIB_DB: '/tmp/x.db',
        RECLIB_HOST: '0.0.0.0',
        RECLIB_PORT: '9000',
        RECLIB_PUBLIC_URL: 'https://rec.example.org/',
        RECLIB_WEBHOOK_ALLOW: 'nas.local,192.168.0.0/16',
        RECLIB_DELIVERY_BACKOFF_MS: '10',
        RECLIB_DELIVERY_PER_MINUTE: '100',
        RECLIB_DELIVERY_CONCURRENCY: '8',
        RECLIB_DELIVERY_TIMEOUT_MS: '1000',
        RECLIB_RATE_LIMIT: '0',
        RECLIB_MASTER_SECRET_FILE: '/tmp/m.secret',
        RECLIB_HEADERS_TIMEOUT_MS: '2000',
        RECLIB_REQUEST_TIMEOUT_MS: '4000',
        RECLIB_KEEP_ALIVE_TIMEOUT_MS: '1000',
        RECLIB_IDLE_TIMEOUT_MS: '9000',
        RECLIB_DURABILITY: 'normal',
        RECLIB_METRICS_TOKEN: 'scrape-token-0123456789',
        RECLIB_LOG_FORMAT: 'json',
        RECLIB_DELIVERIES: 'off',
      },
    );
    assert.deepEqual(c, {
      db: '/tmp/x.db',
      host: '0.0.0.0',
      port: 9000,
      publicUrl: 'https://rec.example.org',
      webhookAllow: 'nas.local,192.168.0.0/16',
      allowList: parseAllowList('nas.local,192.168.0.0/16'),
      deliveryBackoffMs: 10,
      deliveryPerMinute: 100,
      deliveryConcurrency: 8,
      deliveryTimeoutMs: 1000,
      rateLimit: 0,
      masterSecretFile: '/tmp/m.secret',
      headersTimeoutMs: 2000,
      requestTimeoutMs: 4000,
      keepAliveTimeoutMs: 1000,
      idleTimeoutMs: 9000,
      durability: 'normal',
      metricsToken: 'scrape-token-0123456789',
      logFormat: 'json',
      deliveries: 'off',
    });
  });

  it('PORT is used when RECLIB_PORT is not set; RECLIB_PORT wins over PORT', () => {
    assert.equal(loadConfig({}, { PORT: '3000' }).port, 3000);
    assert.equal(loadConfig({}, { PORT: '3000', RECLIB_PORT: '4000' }).port, 4000);
  });

  it('flags win over the environment', () => {
    const env = { RECLIB_DB: '/env.db', RECLIB_PORT: '1', RECLIB_RATE_LIMIT: '5', RECLIB_HOST: '::1' };
    const c = loadConfig({ db: '/flag.db', port: '2', rateLimit: '7' }, env);
    assert.equal(c.db, '/flag.db');
    assert.equal(c.port, 2);
    assert.equal(c.rateLimit, 7);
    assert.equal(c.host, '::1');
    assert.equal(c.masterSecretFile, '/flag.db.secret', 'the master secret sits beside the chosen db');
  });

  it('a bad value is a ConfigError naming the setting', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ port: 'abc' }, /port/],
      [{ port: '70000' }, /port.*65535/],
      [{ port: '-1' }, /port/],
      [{ rateLimit: '1.5' }, /rate-limit/],
      [{ deliveryConcurrency: '0' }, /delivery-concurrency/],
      [{ publicUrl: 'not a url' }, /public-url/],
      [{ publicUrl: 'ftp://files.example.org' }, /public-url must be an http:\/\/ or https:\/\/ URL/],
      [{ publicUrl: 'mailto:me@example.org' }, /public-url/],
      [{ publicUrl: 'https://rec.example.org/reclib?token=1' }, /public-url must not have a query or fragment/],
      [{ publicUrl: 'https://rec.example.org/#/' }, /public-url must not have a query or fragment/],
      [{ db: '' }, /db/],
      [{ durability: 'fast' }, /\(--durability\): durability must be full or normal/],
      [{ deliveries: 'no' }, /\(--deliveries\): deliveries must be on or off/],
      [{ logFormat: 'xml' }, /\(--log-format\): log-format must be text or json/],
      [{ metricsToken: 'short' }, /\(--metrics-token\): metrics-token must be at least 16 characters/],
      [{ metricsToken: 'has a space in the middle' }, /\(--metrics-token\)/],
      [{ metricsToken: 'x'.repeat(513) }, /\(--metrics-token\): metrics-token must be at most 512 characters/],
    ];
    for (const [flags, message] of cases) {
      assert.throws(() => loadConfig(flags, {}), (e: unknown) => e instanceof ConfigError && message.test(e.message), JSON.stringify(flags));
    }
    // A bad value from the environment names the variable too: the person looks for it there.
    assert.throws(() => loadConfig({}, { RECLIB_PORT: 'x' }), /^Error: invalid configuration \(--port, from RECLIB_PORT\): port must be a whole number$/);
    assert.throws(() => loadConfig({}, { PORT: 'x' }), /\(--port, from PORT\)/);
    // Never the value: it may be a secret.
    assert.throws(
      () => loadConfig({}, { RECLIB_METRICS_TOKEN: 'a-long-secret-token-from-a-file\n' }),
      (e: unknown) => e instanceof ConfigError && e.message.includes('from RECLIB_METRICS_TOKEN') && !e.message.includes('a-long-secret'),
    );
    assert.throws(() => loadConfig({ port: 'x' }, { RECLIB_PORT: '80' }), /\(--port\): /, 'a flag wins, and is named alone');
  });
});

describe('the CLI exits with code 2 and a clear message on bad configuration', () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-config-'));

  it('a bad flag value exits 2 naming the setting', async () => {
    const r = await runCli(['serve', '--db', path.join(tmp(), 'r.db'), '--port', 'eighty']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /invalid configuration \(--port\): port must be a whole number/);
    assert.equal(r.stdout, '');
  });

  it('a bad environment value exits 2 naming the setting', async () => {
    const r = await runCli(['serve', '--db', path.join(tmp(), 'r.db')], { env: { RECLIB_RATE_LIMIT: 'lots' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /rate-limit/);
  });

  it('a malformed --webhook-allow entry is refused at startup, exit 2, naming the entry', async () => {
    const r = await runCli(['serve', '--db', path.join(tmp(), 'r.db'), '--webhook-allow', '127.0.0.1,10.0.0.0/99']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--webhook-allow/);
    assert.match(r.stderr, /10\.0\.0\.0\/99/);
  });

  it('an unknown option or a bad number on an admin command exits 2', async () => {
    const db = path.join(tmp(), 'r.db');
    const unknown = await runCli(['serve', '--db', db, '--colour', 'blue']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option/);
    const badInt = await runCli(['keys', 'create', '--db', db, '--account', 'acc_x', '--name', 'k', '--permissions', 'events:read', '--expiry', 'soon']);
    assert.equal(badInt.code, 2, badInt.stderr);
    assert.match(badInt.stderr, /--expiry must be a whole number from 1 to 365/);
    assert.doesNotMatch(badInt.stderr, /\n\s+at /, 'no stack trace');
    // Out of range is the same kind of mistake: exit 2 too (it was 1, from the service's check).
    for (const [flag, value] of [['--expiry', '0'], ['--expiry', '366']] as const) {
      const r = await runCli(['keys', 'create', '--db', db, '--account', 'acc_x', '--name', 'k', '--permissions', 'events:read', flag, value]);
      assert.equal(r.code, 2, `${flag} ${value}: ${r.stderr}`);
      assert.match(r.stderr, /--expiry must be a whole number from 1 to 365/);
    }
    const host = await runCli(['serve', '--db', path.join(tmp(), 's.db'), '--host', '999.1.1.1', '--port', '0']);
    assert.equal(host.code, 2, host.stderr);
    assert.match(host.stderr, /^reclib: invalid configuration \(--host\): cannot listen on "999\.1\.1\.1": not an address of this machine \(ENOTFOUND\)/);
    const ttl = await runCli(['sessions', 'create', '--db', db, '--account', 'acc_x', '--ttl-hours', '0']);
    assert.equal(ttl.code, 2, ttl.stderr);
    assert.match(ttl.stderr, /--ttl-hours must be a whole number from 1 to 8784/);
  });
});
