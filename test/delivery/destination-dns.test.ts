// The webhook destination is judged with DNS when a subscription is created (a hostname that
// resolves to a private address is refused at once), and a --webhook-allow CIDR matches the
// resolved address of a hostname, so a hostname inside a listed range may use http and any port
// (docs/decisions.md §1 --webhook-allow, §6), at creation and at send time.
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, test } from 'node:test';
import { checkWebhookDestination, parseAllowList, type Resolver } from '../../src/delivery/destination-guard';
import { sendWebhook } from '../../src/delivery/http-sender';
import { AppError } from '../../src/errors';
import { WebhookService } from '../../src/services/webhooks';
import { harness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';

const answering =
  (...addresses: LookupAddress[]): Resolver =>
  async () => addresses;
const LOOPBACK_V4: LookupAddress = { address: '127.0.0.1', family: 4 };
const PRIVATE_V4: LookupAddress = { address: '10.0.0.7', family: 4 };
const PUBLIC_V4: LookupAddress = { address: '93.184.216.34', family: 4 };

describe('subscription creation checks the resolved address', () => {
  test('a hostname that resolves to a private address is refused with 400', async () => {
    const h = harness();
    const webhooks = new WebhookService({ ...h.services.core, resolver: answering(PRIVATE_V4) });
    await assert.rejects(
      webhooks.create(h.accountId, { url: 'https://intranet.example/hook', events: ['recording.created'] }),
      (e: unknown) => e instanceof AppError && e.code === 'invalid_request' && /non-public/.test(e.message),
    );
    assert.equal(webhooks.listActive(h.accountId).length, 0);
  });

  test('a public hostname is accepted', async () => {
    const h = harness();
    const webhooks = new WebhookService({ ...h.services.core, resolver: answering(PUBLIC_V4) });
    const { webhook } = await webhooks.create(h.accountId, { url: 'https://hooks.example/x', events: ['recording.created'] });
    assert.equal(webhook.url, 'https://hooks.example/x');
  });

  test('a hostname resolving into a listed CIDR may use http and any port', async () => {
    const h = harness({ webhookAllow: '127.0.0.0/8' });
    const webhooks = new WebhookService({ ...h.services.core, resolver: answering(LOOPBACK_V4) });
    const { webhook } = await webhooks.create(h.accountId, { url: 'http://nas.lan:8123/hook', events: ['recording.created'] });
    assert.equal(webhook.url, 'http://nas.lan:8123/hook');
  });

  test('http to a hostname outside the listed ranges (or unresolvable) is still refused', async () => {
    const allow = parseAllowList('127.0.0.0/8');
    await assert.rejects(checkWebhookDestination('http://nas.lan:8123/', allow, answering(PUBLIC_V4)), /must use https/);
    await assert.rejects(checkWebhookDestination('http://nas.lan:8123/', allow, answering(LOOPBACK_V4, PUBLIC_V4)), /must use https/);
    await assert.rejects(checkWebhookDestination('http://nas.lan/', allow, async () => { throw new Error('offline'); }), /must use https/);
    await assert.rejects(checkWebhookDestination('https://nas.lan:8443/', allow, answering(PRIVATE_V4)), /port 443/);
  });

  test('POST /api/v2/webhooks: http://localhost:<port> is accepted with --webhook-allow 127.0.0.0/8,::1', async () => {
    const h = harness({ webhookAllow: '127.0.0.0/8,::1' });
    const res = await h.req('POST', '/api/v2/webhooks', { token: h.session, body: { url: 'http://localhost:9/hook', events: ['recording.created'] } });
    assert.equal(res.status, 201, res.text);
  });
});

describe('send time: a hostname inside a listed range over http', () => {
  test('is delivered when it resolves into the range, blocked when it does not', async () => {
    const receiver = await startReceiver(() => (res) => res.writeHead(204).end());
    try {
      const url = `http://receiver.lan:${receiver.port}/hook`;
      const base = { url, body: '{}', headers: { 'content-type': 'application/json' }, timeoutMs: 2000, allow: parseAllowList('127.0.0.0/8') };
      const ok = await sendWebhook({ ...base, resolver: answering(LOOPBACK_V4) });
      assert.equal(ok.ok, true, ok.error ?? '');
      assert.equal(receiver.requests.length, 1);
      const blocked = await sendWebhook({ ...base, resolver: answering(PUBLIC_V4) });
      assert.equal(blocked.ok, false);
      assert.match(blocked.error ?? '', /destination blocked/);
      assert.equal(receiver.requests.length, 1);
    } finally {
      await receiver.close();
    }
  });
});

describe('localhost with a listed range', () => {
  test('https://localhost is accepted when it resolves into a listed range, refused otherwise', async () => {
    const allow = parseAllowList('127.0.0.0/8');
    assert.ok(await checkWebhookDestination('https://localhost/hook', allow, answering(LOOPBACK_V4)));
    await assert.rejects(checkWebhookDestination('https://localhost/hook', allow, answering(PRIVATE_V4)), /localhost/);
    await assert.rejects(checkWebhookDestination('https://localhost/hook', parseAllowList(''), answering(LOOPBACK_V4)), /localhost/);
  });
});
