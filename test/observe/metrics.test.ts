// docs/decisions.md §11: GET /metrics in Prometheus text format, only with --metrics-token and only to
// `Authorization: Bearer <token>`; route templates as labels, never ids.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LibraryCount } from '../../src/observe/library-count';
import type { MetricsStore } from '../../src/store/metrics-store';
import { cliJson, startServe } from '../helpers/bundle';
import { harness } from '../helpers/harness';
import { serveInProcess } from '../helpers/in-process-server';
import { startReceiver } from '../helpers/receiver';

const TOKEN = 'metrics-token-0123456789';
const scrape = (url: string, token = TOKEN) => fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('is a 404 like any unknown path when no metrics token is configured', async () => {
    const h = harness();
    const res = await h.req('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 404);
    assert.equal(res.json.error.code, 'not_found');
  });

  it('answers 401 with the error envelope without the bearer token, with another token, or with an API key', async () => {
    const h = harness({ metricsToken: TOKEN });
    for (const headers of [{} as Record<string, string>, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }, { authorization: `Bearer ${h.key()}` }]) {
      const res = await h.req('GET', '/metrics', { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.json.error.code, 'unauthenticated');
      assert.ok(res.headers.get('x-request-id'));
    }
    const ok = await h.req('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    // The scheme is case-insensitive, as for the API.
    assert.equal((await h.req('GET', '/metrics', { headers: { authorization: `bearer  ${TOKEN}` } })).status, 200);
  });

  it('counts requests by method, route template and status, never by id, and unknown paths as one route', async (t) => {
    const s = await serveInProcess(t, { metricsToken: TOKEN });
    const { key } = s.account();
    const auth = { authorization: `Bearer ${key}` };
    const created = await fetch(`${s.url}/api/v2/recordings`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'm-1' },
      body: JSON.stringify({ type: 'clip', transcript: 'metrics' }),
    });
    assert.equal(created.status, 201);
    const { id } = ((await created.json()) as { recording: { id: string } }).recording;
    for (const path of [`/api/v2/recordings/${id}`, `/api/v2/recordings/${id}`, '/api/v2/recordings/rec_missing', `/nothing/here/${id}`, '/healthz']) {
      await (await fetch(`${s.url}${path}`, { headers: auth })).arrayBuffer();
    }
    const text = await (await scrape(s.url)).text();
    assert.equal(sample(text, 'reclib_http_requests_total{method="POST",route="/api/v2/recordings",status="201"}'), 1);
    assert.equal(sample(text, 'reclib_http_requests_total{method="GET",route="/api/v2/recordings/{id}",status="200"}'), 2);
    assert.equal(sample(text, 'reclib_http_requests_total{method="GET",route="/api/v2/recordings/{id}",status="404"}'), 1);
    assert.equal(sample(text, 'reclib_http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
    assert.equal(sample(text, 'reclib_http_requests_total{method="GET",route="/healthz",status="200"}'), 1);
    assert.equal(sample(text, 'reclib_http_request_duration_seconds_count{method="GET",route="/api/v2/recordings/{id}"}'), 3);
    assert.ok(!text.includes(id), 'no recording id in any label');
    assert.ok(!text.includes('rec_missing') && !text.includes('/nothing'), 'no path in any label');
  });

  it('reports library size, outbox depth, database and WAL size and the process defaults', async (t) => {
    const s = await serveInProcess(t, { metricsToken: TOKEN });
    const { key } = s.account();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `size-${i}` },
        body: JSON.stringify({ type: 'memo', transcript: `note ${i}` }),
      });
      assert.equal(r.status, 201);
    }
    const text = await (await scrape(s.url)).text();
    assert.equal(sample(text, 'reclib_recordings'), 3);
    assert.equal(sample(text, 'reclib_outbox_queued'), 0);
    assert.ok((sample(text, 'reclib_db_size_bytes') ?? 0) > 0);
    assert.ok(sample(text, 'reclib_db_wal_size_bytes') !== undefined);
    assert.ok((sample(text, 'process_resident_memory_bytes') ?? 0) > 0);
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds') !== undefined);
    for (const outcome of ['delivered', 'retry', 'failed', 'disabled']) assert.equal(sample(text, `reclib_deliveries_total{outcome="${outcome}"}`), 0);
  });

  it('counts delivery outcomes: a receiver answering 500 is a retry, and the outbox still holds the delivery', async (t) => {
    const receiver = await startReceiver(() => 500);
    t.after(() => receiver.close());
    const s = await serveInProcess(t, { metricsToken: TOKEN, webhookAllow: '127.0.0.1', deliveryBackoffMs: 3_600_000 });
    const { session } = s.account();
    const auth = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };
    const hook = await fetch(`${s.url}/api/v2/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: receiver.url, events: ['recording.created'] }) });
    assert.equal(hook.status, 201);
    const rec = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { ...auth, 'idempotency-key': 'd-1' }, body: JSON.stringify({ type: 'clip', transcript: 'x' }) });
    assert.equal(rec.status, 201);
    await receiver.waitForRequests(1);
    let text = '';
    for (let i = 0; i < 100; i++) {
      text = await (await scrape(s.url)).text();
      if (sample(text, 'reclib_deliveries_total{outcome="retry"}') === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(sample(text, 'reclib_deliveries_total{outcome="retry"}'), 1);
    assert.equal(sample(text, 'reclib_deliveries_total{outcome="delivered"}'), 0);
    assert.equal(sample(text, 'reclib_outbox_queued'), 1);
  });

  it('counts the library in a worker thread with its own connection, not on the server\'s', async (t) => {
    const s = await serveInProcess(t);
    const { key } = s.account();
    for (const n of [1, 2]) {
      await fetch(`${s.url}/api/v2/recordings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `w-${n}` },
        body: JSON.stringify({ type: 'clip', transcript: `worker ${n}` }),
      });
    }
    const mainConnection = { liveRecordings: () => assert.fail('counted on the server connection') } as unknown as MetricsStore;
    const counter = new LibraryCount(s.server.services.core.config.db, mainConnection);
    t.after(() => counter.stop());
    assert.equal(await counter.count(), 2);
  });

  it('a counting worker that cannot open the file: counted on the server connection, and said once', async (t) => {
    let counted = 0;
    const mainConnection = { liveRecordings: () => ++counted } as unknown as MetricsStore;
    const counter = new LibraryCount(path.join(os.tmpdir(), 'no-such-dir-reclib', 'x', 'missing.db'), mainConnection);
    const logged: string[] = [];
    counter.logTrouble = (line) => logged.push(line);
    t.after(() => counter.stop());
    assert.equal(await counter.count(), 1);
    assert.equal(await counter.count(), 2);
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0]!, /^reclib: the library-count thread failed \(TypeError: Cannot open database because the directory does not exist\); \/metrics counts recordings on the server's connection/);
  });

  it('the built bundle serves /metrics with --metrics-token (the counting worker included) and still stops with exit 0', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-metrics-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const db = path.join(dir, 'reclib.db');
    const server = await startServe(['--db', db, '--metrics-token', TOKEN]);
    t.after(() => server.stop('SIGKILL'));
    const { account } = await cliJson(['accounts', 'create', '--db', db, '--name', 'scraped']);
    const { secret } = await cliJson(['keys', 'create', '--db', db, '--account', account.id, '--name', 'k', '--permissions', 'recordings:create']);
    const rec = await fetch(`${server.url}/api/v2/recordings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': 'b-1' },
      body: JSON.stringify({ type: 'clip', transcript: 'bundled' }),
    });
    assert.equal(rec.status, 201);
    const text = await (await scrape(server.url)).text();
    assert.equal(sample(text, 'reclib_recordings'), 1);
    assert.equal(sample(text, 'reclib_http_requests_total{method="POST",route="/api/v2/recordings",status="201"}'), 1);
    assert.equal(await server.stop('SIGTERM'), 0, server.stderr());
  });
});
