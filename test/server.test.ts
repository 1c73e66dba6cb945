// Starting the server (docs/decisions.md §1): the public URL defaults to the address the server
// listens on (the services get a config that carries it from the start, and the caller's config is
// left as given), and in a container without a public URL the server warns.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../src/config';
import { inContainer, startServer } from '../src/server';
import { fetchUrl } from '../src/services/text-payload';
import { serveInProcess } from './helpers/in-process-server';

describe('the default public URL', () => {
  it('is the bound address (the port the system picked for --port 0), without changing the config passed in', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-public-url-'));
    const config = testConfig({ db: path.join(dir, 'reclib.db'), port: 0, publicUrl: undefined });
    const server = await startServer(config, () => {});
    t.after(async () => {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    assert.equal(server.services.core.config.publicUrl, server.url);
    assert.equal(fetchUrl(server.services.core.config, 'rec_1'), `${server.url}/api/v1/recordings/rec_1`);
    assert.equal(config.publicUrl, undefined);
  });
});

// docs/decisions.md §1: in a container the listen address is not the one clients reach, so the server warns
// at start when RECLIB_PUBLIC_URL is unset; with it set, no warning.
describe('the start-up warning about RECLIB_PUBLIC_URL', () => {
  it('RECLIB_CONTAINER=1 (set by the Dockerfile) counts as a container', () => {
    assert.equal(inContainer({ RECLIB_CONTAINER: '1' }), true);
  });

  it('in a container without a public URL the server warns and names RECLIB_PUBLIC_URL; with one it does not', async (t) => {
    const before = process.env.RECLIB_CONTAINER;
    process.env.RECLIB_CONTAINER = '1';
    t.after(() => {
      if (before === undefined) delete process.env.RECLIB_CONTAINER;
      else process.env.RECLIB_CONTAINER = before;
    });
    const without = await serveInProcess(t);
    assert.ok(without.lines().some((l) => /^warn: RECLIB_PUBLIC_URL is not set, and this looks like a container/.test(l)), without.lines().join('\n'));
    const withUrl = await serveInProcess(t, { publicUrl: 'https://rec.example.org' });
    assert.ok(!withUrl.lines().some((l) => l.includes('RECLIB_PUBLIC_URL')), withUrl.lines().join('\n'));
  });
});

// The app is loaded a moment after the start (src/server.ts, APP_LOAD_DELAY_MS): until then the
// server answers /healthz itself, and any other request waits for the app instead of failing.
describe('a server that has just started', () => {
  it('answers /healthz and every API request sent before its app was loaded', async (t) => {
    // The timer never loads the app here: the first request that needs it does.
    const s = await serveInProcess(t, {}, { appLoadDelayMs: 3_600_000 });
    const { key } = s.account();
    const call = (method: string, p: string, body?: unknown) =>
      fetch(`${s.url}${p}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': 'first' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, requestId: res.headers.get('x-request-id'), json: (await res.json()) as Record<string, any> })); // eslint-disable-line @typescript-eslint/no-explicit-any -- shapes vary
    const [health, created, missing, unknown] = await Promise.all([
      call('GET', '/healthz'),
      call('POST', '/api/v2/recordings', { type: 'clip', transcript: 'first words' }),
      call('GET', '/api/v2/recordings/rec_0000000000000000000000'),
      call('GET', '/api/v2/nothing-here'),
    ]);
    assert.deepEqual(health.json, { status: 'ok' });
    assert.equal(health.status, 200);
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.recording.transcript, 'first words');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'not_found');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'not_found');
    for (const r of [health, created, missing, unknown]) assert.match(r.requestId ?? '', /^req_/);
    const read = await call('GET', `/api/v2/recordings/${created.json.recording.id as string}`);
    assert.equal(read.status, 200);
    assert.equal(read.json.recording.transcript, 'first words');
  });

  it('answers every request, /healthz included, 503 with the envelope when the app cannot be loaded, and logs why', async (t) => {
    const s = await serveInProcess(t, {}, { appLoadDelayMs: 3_600_000, importApp: () => Promise.reject(new Error('chunk-X.mjs is missing')) });
    const health = await fetch(`${s.url}/healthz`);
    assert.equal(health.status, 200, 'healthy until something needs the app');
    await health.arrayBuffer();
    const write = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'client-id-1' }, body: '{}' });
    assert.equal(write.status, 503);
    assert.equal(write.headers.get('x-request-id'), 'client-id-1');
    assert.equal(((await write.json()) as { error: { code: string } }).error.code, 'unavailable');
    const after = await fetch(`${s.url}/healthz`);
    assert.equal(after.status, 503);
    assert.equal(((await after.json()) as { error: { code: string } }).error.code, 'unavailable');
    assert.match(after.headers.get('x-request-id') ?? '', /^req_/);
    const lines = s.lines();
    assert.ok(lines.some((l) => l.includes('the HTTP app could not be loaded') && l.includes('chunk-X.mjs is missing')), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('unmatched 503') && l.includes('client-id-1')), lines.join('\n'));
  });
});
