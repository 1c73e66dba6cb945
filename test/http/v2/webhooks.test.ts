import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { deriveWebhookSecret } from '../../../src/delivery/signing';
import { ACCEPTED_URLS, REJECTED_URLS } from '../../delivery/rejected-urls';
import { harness, type Harness } from '../../helpers/harness';

const HOOK = 'https://hooks.example.com/reclib';

const create = (h: Harness, body: unknown, token = h.session) => h.req('POST', '/api/v2/webhooks', { token, body });

describe('v2 /webhooks', () => {
  test('POST creates a subscription: 201 { webhook, secret } with the whsec_ secret derived from the master secret', async () => {
    const h = harness();
    const res = await create(h, { url: HOOK, events: ['recording.created', 'recording.deleted'] });
    assert.equal(res.status, 201);
    const { webhook, secret } = res.json;
    assert.deepEqual(Object.keys(webhook).sort(), ['createdAt', 'events', 'id', 'payloadMode', 'rules', 'status', 'url']);
    assert.match(webhook.id, /^wh_[A-Za-z0-9]+$/);
    assert.deepEqual(webhook, {
      id: webhook.id, url: HOOK, events: ['recording.created', 'recording.deleted'], payloadMode: 'default', rules: null,
      status: 'active', createdAt: h.clock.now(),
    });
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secret, deriveWebhookSecret(h.services.core.masterSecret, webhook.id));
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
  });

  test('every webhook operation needs a session: an API key gets 403 session_required', async () => {
    const h = harness();
    const key = h.key();
    const made = await create(h, { url: HOOK, events: ['recording.created'] });
    for (const [method, p, body] of [
      ['POST', '/api/v2/webhooks', { url: HOOK, events: ['recording.created'] }],
      ['GET', '/api/v2/webhooks', undefined],
      ['DELETE', `/api/v2/webhooks/${made.json.webhook.id}`, undefined],
    ] as const) {
      const res = await h.req(method, p, { token: key, body });
      assert.equal(res.status, 403, `${method} ${p}`);
      assert.equal(res.json.error.code, 'session_required');
    }
    assert.equal(h.services.webhooks.listActive(h.accountId).length, 1);
  });

  test('GET lists active default-payload subscriptions only: disabled and text-mode ones are left out', async () => {
    const h = harness();
    const a = (await create(h, { url: HOOK, events: ['recording.created'] })).json.webhook;
    const b = (await create(h, { url: `${HOOK}/b`, events: ['recording.updated'] })).json.webhook;
    await create(h, { url: `${HOOK}/text`, events: ['recording.transcript_ready'], payloadMode: 'text' });
    await create(h, { url: `${HOOK}/rule`, payloadMode: 'text', rules: { prefix: 'todo' } });
    assert.equal((await h.req('DELETE', `/api/v2/webhooks/${b.id}`, { token: h.session })).status, 204);
    const res = await h.req('GET', '/api/v2/webhooks', { token: h.session });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { webhooks: [a] });
    assert.equal(JSON.stringify(res.json).includes('whsec_'), false);
  });

  test('DELETE disables (204), repeats as 204, and an unknown or foreign id is 404', async () => {
    const h = harness();
    const other = harness();
    const w = (await create(h, { url: HOOK, events: ['recording.created'] })).json.webhook;
    assert.equal((await h.req('DELETE', `/api/v2/webhooks/${w.id}`, { token: h.session })).status, 204);
    assert.equal(h.services.webhooks.get(h.accountId, w.id).status, 'disabled');
    assert.equal((await h.req('DELETE', `/api/v2/webhooks/${w.id}`, { token: h.session })).status, 204);
    const missing = await h.req('DELETE', '/api/v2/webhooks/wh_nope', { token: h.session });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'not_found');
    const w2 = (await create(other, { url: HOOK, events: ['recording.created'] })).json.webhook;
    assert.equal((await h.req('DELETE', `/api/v2/webhooks/${w2.id}`, { token: h.session })).status, 404);
    assert.equal((await h.req('DELETE', '/api/v2/webhooks/bad%20id', { token: h.session })).status, 400);
  });

  test('the 11th active subscription is 409 limit_reached; disabling one makes room', async () => {
    const h = harness();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await create(h, { url: `${HOOK}/${i}`, events: ['recording.created'], ...(i % 2 ? { payloadMode: 'text' } : {}) });
      assert.equal(res.status, 201);
      ids.push(res.json.webhook.id);
    }
    const eleventh = await create(h, { url: `${HOOK}/10`, events: ['recording.created'] });
    assert.equal(eleventh.status, 409);
    assert.equal(eleventh.json.error.code, 'limit_reached');
    await h.req('DELETE', `/api/v2/webhooks/${ids[0]}`, { token: h.session });
    assert.equal((await create(h, { url: `${HOOK}/10`, events: ['recording.created'] })).status, 201);
  });

  test('a rejected destination URL is 400 invalid_request naming url (the guard table)', async () => {
    const h = harness();
    for (const [rule, url] of REJECTED_URLS) {
      const res = await create(h, { url, events: ['recording.created'] });
      assert.equal(res.status, 400, rule);
      assert.equal(res.json.error.code, 'invalid_request', rule);
      assert.match(res.json.error.message, /^url/, rule);
    }
    assert.equal(h.services.webhooks.listActive(h.accountId).length, 0);
  });

  test('public https destinations are accepted and stored as the URL parser normalises them', async () => {
    const h = harness();
    for (const url of ACCEPTED_URLS) {
      const res = await create(h, { url, events: ['recording.created'] });
      assert.equal(res.status, 201, url);
      assert.equal(res.json.webhook.url, new URL(url).href);
      await h.req('DELETE', `/api/v2/webhooks/${res.json.webhook.id}`, { token: h.session });
    }
  });

  test('--webhook-allow admits a listed home-network destination over http on any port, and only that one', async () => {
    const h = harness({ webhookAllow: '192.168.1.0/24,ha.local' });
    assert.equal((await create(h, { url: 'http://192.168.1.10:8123/api/webhook/x', events: ['recording.created'] })).status, 201);
    assert.equal((await create(h, { url: 'http://ha.local:8123/hook', events: ['recording.created'] })).status, 201);
    assert.equal((await create(h, { url: 'http://192.168.2.10:8123/hook', events: ['recording.created'] })).status, 400);
    assert.equal((await create(h, { url: 'http://127.0.0.1:8123/hook', events: ['recording.created'] })).status, 400);
  });

  const invalidBodies: Array<[string, unknown, RegExp]> = [
    ['missing url', { events: ['recording.created'] }, /body\.url/],
    ['url not a string', { url: 5, events: ['recording.created'] }, /body\.url/],
    ['missing events', { url: HOOK }, /^events/],
    ['empty events', { url: HOOK, events: [] }, /^events/],
    ['unknown event type', { url: HOOK, events: ['recording.created', 'recording.exploded'] }, /body\.events\[1\]/],
    ['transcript_ready without text mode', { url: HOOK, events: ['recording.transcript_ready'] }, /events\[0\].*text/],
    ['recording.manual is not subscribable', { url: HOOK, events: ['recording.manual'] }, /body\.events\[0\]/],
    ['unknown payload mode', { url: HOOK, events: ['recording.created'], payloadMode: 'html' }, /body\.payloadMode/],
    ['unknown field', { url: HOOK, events: ['recording.created'], secret: 'mine' }, /body\.secret: unknown field/],
    ['rules without text mode', { url: HOOK, events: ['recording.created'], rules: { prefix: 'todo' } }, /^rules.*text/],
    ['empty rules', { url: HOOK, payloadMode: 'text', rules: {} }, /^rules: configure/],
    ['empty prefix', { url: HOOK, payloadMode: 'text', rules: { prefix: '' } }, /body\.rules\.prefix/],
    ['blank prefix', { url: HOOK, payloadMode: 'text', rules: { prefix: '   ' } }, /^rules\.prefix/],
    ['kind other than clip or memo', { url: HOOK, payloadMode: 'text', rules: { kind: 'recording' } }, /body\.rules\.kind/],
    ['unknown capture input', { url: HOOK, payloadMode: 'text', rules: { captureInput: 'wink' } }, /body\.rules\.captureInput/],
    ['unknown rule field', { url: HOOK, payloadMode: 'text', rules: { prefix: 'a', source: 'x' } }, /body\.rules\.source/],
    ['rules with events other than transcript_ready', { url: HOOK, payloadMode: 'text', events: ['recording.created'], rules: { kind: 'clip' } }, /^events/],
  ];
  for (const [rule, body, message] of invalidBodies) {
    test(`POST with ${rule} is 400 invalid_request`, async () => {
      const h = harness();
      const res = await create(h, body);
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, 'invalid_request');
      assert.match(res.json.error.message, message);
    });
  }

  test('text mode: rules default events to recording.transcript_ready; without rules it may list every event type', async () => {
    const h = harness();
    const ruled = await create(h, { url: HOOK, payloadMode: 'text', rules: { prefix: 'Todo', captureInput: 'hold', kind: 'clip' } });
    assert.equal(ruled.status, 201);
    assert.deepEqual(ruled.json.webhook.events, ['recording.transcript_ready']);
    assert.deepEqual(ruled.json.webhook.rules, { prefix: 'Todo', captureInput: 'hold', kind: 'clip' });
    assert.equal(ruled.json.webhook.payloadMode, 'text');
    const all = ['recording.created', 'recording.updated', 'recording.transcript_ready', 'recording.deleted'];
    const plain = await create(h, { url: HOOK, payloadMode: 'text', events: [...all, 'recording.created'] });
    assert.equal(plain.status, 201);
    assert.deepEqual(plain.json.webhook.events, all);
    assert.equal(plain.json.webhook.rules, null);
  });

  test('webhook secrets are not stored in the database file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reclib-wh-'));
    try {
      const h = harness({ db: path.join(dir, 'reclib.db') });
      const secrets: string[] = [];
      for (let i = 0; i < 3; i++) secrets.push((await create(h, { url: `${HOOK}/${i}`, events: ['recording.created'] })).json.secret);
      const db = h.services.core.db;
      const files = () => fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f)));
      const before = files();
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      for (const bytes of [...before, ...files()]) {
        for (const secret of secrets) {
          assert.equal(bytes.includes(secret), false);
          assert.equal(bytes.includes(secret.slice(6)), false);
          assert.equal(bytes.includes(Buffer.from(secret.slice(6), 'base64')), false);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the OpenAPI document describes the three webhook operations as session-only', async () => {
    const h = harness();
    const doc = (await h.req('GET', '/api/v2/openapi.json')).json;
    assert.ok(doc.paths['/webhooks'].post);
    assert.ok(doc.paths['/webhooks'].get);
    assert.ok(doc.paths['/webhooks/{id}'].delete);
    assert.equal(doc.paths['/webhooks'].post.operationId, 'createWebhook');
  });
});
