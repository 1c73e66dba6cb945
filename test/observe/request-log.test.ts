// docs/decisions.md §11: one log line per request ({time, level, msg, requestId, method, route,
// status, ms} with --log-format json) and per delivery outcome; the start-up line names the
// database, public URL and allow-list; no secret, token, password or transcript in any line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serveInProcess } from '../helpers/in-process-server';
import { startReceiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';

const json = (lines: string[]) => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the request log', () => {
  it('with --log-format json writes one object per request with exactly time, level, msg, requestId, method, route, status, ms', async (t) => {
    const s = await serveInProcess(t, { logFormat: 'json' });
    const { key } = s.account();
    const res = await fetch(`${s.url}/api/v2/recordings/rec_0123456789abcdefghij`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 404);
    const requestId = res.headers.get('x-request-id');
    await (await fetch(`${s.url}/no/such/path`)).arrayBuffer();
    const requests = json(s.lines()).filter((l) => l.msg === 'request');
    assert.equal(requests.length, 2);
    const [first, second] = requests;
    assert.deepEqual(Object.keys(first!), ['time', 'level', 'msg', 'requestId', 'method', 'route', 'status', 'ms']);
    assert.equal(first!.requestId, requestId);
    assert.equal(first!.method, 'GET');
    assert.equal(first!.route, '/api/v2/recordings/{id}');
    assert.equal(first!.status, 404);
    assert.equal(first!.level, 'info');
    assert.equal(typeof first!.ms, 'number');
    assert.ok(!Number.isNaN(Date.parse(String(first!.time))));
    assert.equal(second!.route, 'unmatched');
  });

  it('a route outside /api is labelled by its own path: POST /mcp is /mcp', async (t) => {
    const s = await serveInProcess(t, { logFormat: 'json' });
    const res = await fetch(`${s.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401);
    const line = await waitFor(() => json(s.lines()).find((l) => l.msg === 'request'), 'the log line');
    assert.equal(line.route, '/mcp');
  });

  it('in text format a request is one readable line: time, method, route, status, duration, request id', async (t) => {
    const s = await serveInProcess(t);
    const res = await fetch(`${s.url}/healthz`);
    const line = await waitFor(() => s.lines().find((l) => l.includes(' GET /healthz ')), 'the log line');
    assert.match(line, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z GET /healthz 200 [\\d.]+ms ${res.headers.get('x-request-id')}$`));
  });

  it('the start-up line begins with the URL and names the database file, the public URL and the webhook allow-list', async (t) => {
    const s = await serveInProcess(t, { webhookAllow: '127.0.0.1,nas.local', publicUrl: 'https://rec.example.org' });
    const odd = await serveInProcess(t, { publicUrl: 'https://admin:hunter2-password@rec.example.org/base?key=url-secret' });
    const oddLine = odd.lines()[0] ?? '';
    assert.match(oddLine, /public URL https:\/\/rec\.example\.org\/base,/);
    assert.ok(!/hunter2|url-secret|admin/.test(oddLine), oddLine);
    const first = s.lines()[0] ?? '';
    assert.match(first, new RegExp(`^reclib listening on ${s.url} `));
    assert.match(first, /database \/\S+reclib\.db/);
    assert.match(first, /public URL https:\/\/rec\.example\.org/);
    assert.match(first, /webhook allow-list 127\.0\.0\.1,nas\.local/);
  });
});

describe('delivery outcomes are logged', () => {
  for (const format of ['text', 'json'] as const) {
    it(`(${format}) a failed delivery names the subscription, the status and the next try`, async (t) => {
      const receiver = await startReceiver(() => 503);
      t.after(() => receiver.close());
      const s = await serveInProcess(t, { logFormat: format, webhookAllow: '127.0.0.1', deliveryBackoffMs: 60_000 });
      const { session } = s.account();
      const auth = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };
      const hook = (await (await fetch(`${s.url}/api/v2/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: receiver.url, events: ['recording.created'] }) })).json()) as { webhook: { id: string } };
      await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { ...auth, 'idempotency-key': 'log-1' }, body: JSON.stringify({ type: 'clip', transcript: 'x' }) });
      const line = await waitFor(() => s.lines().find((l) => l.includes('delivery dlv_')), 'the log line');
      assert.ok(line.includes(hook.webhook.id), line);
      assert.match(line, /attempt 1: failed: status 503; next try at \d{4}-\d\d-\d\dT/);
      if (format === 'json') {
        const entry = JSON.parse(line) as Record<string, unknown>;
        assert.equal(entry.level, 'warn');
        assert.equal(entry.webhookId, hook.webhook.id);
        assert.equal(entry.outcome, 'retry');
        assert.equal(entry.statusCode, 503);
        assert.match(String(entry.nextAttemptAt), /^\d{4}-\d\d-\d\dT.*Z$/);
      } else {
        assert.match(line, /^\d{4}-\d\d-\d\dT[\d:.]+Z warn: delivery /);
      }
    });
  }
});

describe('no secret in the log', () => {
  it('API keys, session tokens, passwords, query strings, webhook secrets and URLs, the metrics token and transcripts never appear', async (t) => {
    const receiver = await startReceiver(() => 500);
    t.after(() => receiver.close());
    const metricsToken = 'metrics-secret-token-5f1d2c';
    const s = await serveInProcess(t, { logFormat: 'json', metricsToken, webhookAllow: '127.0.0.1' });
    const password = 'correct-horse-battery-9x7';
    const { id: account, session, key } = s.account(password);
    const transcript = 'the unmistakable transcript words';
    const hookUrl = `${receiver.url}?token=hook-url-secret-4411`;
    const bearer = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const asSession = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };

    const login = await fetch(`${s.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account, password }) });
    assert.equal(login.status, 200);
    const { session: fresh } = (await login.json()) as { session: { token: string } };
    const wrong = await fetch(`${s.url}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ account, password: `${password}-wrong` }) });
    assert.equal(wrong.status, 401);
    const hook = await fetch(`${s.url}/api/v2/webhooks`, { method: 'POST', headers: asSession, body: JSON.stringify({ url: hookUrl, events: ['recording.created'] }) });
    assert.equal(hook.status, 201);
    const { secret } = (await hook.json()) as { secret: string };
    const rec = await fetch(`${s.url}/api/v2/recordings`, { method: 'POST', headers: { ...bearer, 'idempotency-key': 'secret-1' }, body: JSON.stringify({ type: 'clip', title: transcript, transcript }) });
    assert.equal(rec.status, 201);
    await fetch(`${s.url}/api/v2/recordings?q=${encodeURIComponent('unmistakable')}&token=query-secret-7731`, { headers: bearer });
    await fetch(`${s.url}/nowhere?access_token=query-secret-7731`, { headers: { cookie: `reclib_session=${fresh.token}` } });
    await fetch(`${s.url}/api/v2/recordings`, { headers: { authorization: 'Bearer rlk_not-a-real-key-but-secret-looking' } });
    await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}-guess` } });
    await receiver.waitForRequests(1);
    await waitFor(() => s.lines().find((l) => l.includes('"outcome":"retry"')), 'the log line');

    const log = s.lines().join('\n');
    assert.ok(json(s.lines()).filter((l) => l.msg === 'request').length >= 9, log);
    for (const value of [key, session, fresh.token, password, secret, 'hook-url-secret-4411', 'query-secret-7731', 'not-a-real-key', metricsToken, transcript, 'unmistakable']) {
      assert.ok(!log.includes(value), `the log holds ${value}:\n${log}`);
    }
  });
});
