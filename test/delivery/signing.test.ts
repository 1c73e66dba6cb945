import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { deriveWebhookSecret, signDelivery } from '../../src/delivery/signing';

const MASTER = Buffer.alloc(32, 7);
const BODY = JSON.stringify({ id: '1042', type: 'recording.created', data: { title: 'Café ☕ notes' } });
const nowSec = (): number => Math.floor(Date.now() / 1000);

function signedDelivery(body = BODY) {
  const secret = deriveWebhookSecret(MASTER, 'wh_test');
  return { secret, headers: signDelivery(secret, 'dlv_123', body, nowSec()) };
}

describe('deriveWebhookSecret', () => {
  test('is whsec_ plus standard base64 of 32 bytes', () => {
    const secret = deriveWebhookSecret(MASTER, 'wh_a');
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
  });

  test('is stable for one webhook and differs across webhooks and master secrets', () => {
    assert.equal(deriveWebhookSecret(MASTER, 'wh_a'), deriveWebhookSecret(MASTER, 'wh_a'));
    assert.notEqual(deriveWebhookSecret(MASTER, 'wh_a'), deriveWebhookSecret(MASTER, 'wh_b'));
    assert.notEqual(deriveWebhookSecret(MASTER, 'wh_a'), deriveWebhookSecret(Buffer.alloc(32, 8), 'wh_a'));
  });
});

describe('signDelivery', () => {
  test('Service-Signature has the form t=<unix s>,v1=<64 lowercase hex>', () => {
    const secret = deriveWebhookSecret(MASTER, 'wh_a');
    const headers = signDelivery(secret, 'dlv_1', BODY, 1767225600);
    assert.match(headers['service-signature'] ?? '', /^t=1767225600,v1=[0-9a-f]{64}$/);
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers['webhook-id'], 'dlv_1');
    assert.equal(headers['webhook-timestamp'], '1767225600');
    assert.match(headers['webhook-signature'] ?? '', /^v1,[A-Za-z0-9+/]{43}=$/);
  });

  test("Stripe's verifier accepts Service-Signature", () => {
    const { secret, headers } = signedDelivery();
    const event = Stripe.webhooks.constructEvent(BODY, headers['service-signature'] ?? '', secret, 300);
    assert.equal(event.id, '1042');
  });

  test("Stripe's verifier rejects a tampered body", () => {
    const { secret, headers } = signedDelivery();
    assert.throws(
      () => Stripe.webhooks.constructEvent(BODY.replace('1042', '1043'), headers['service-signature'] ?? '', secret, 300),
      /signature/i,
    );
  });

  test('a Standard Webhooks verifier accepts webhook-signature', () => {
    const { secret, headers } = signedDelivery();
    assert.deepEqual(new Webhook(secret).verify(BODY, headers), JSON.parse(BODY));
  });

  test('a Standard Webhooks verifier rejects a tampered body', () => {
    const { secret, headers } = signedDelivery();
    assert.throws(() => new Webhook(secret).verify(BODY.replace('1042', '1043'), headers), /signature/i);
  });

  test('a signature made with another subscription secret is rejected by both verifiers', () => {
    const { headers } = signedDelivery();
    const other = deriveWebhookSecret(MASTER, 'wh_other');
    assert.throws(() => Stripe.webhooks.constructEvent(BODY, headers['service-signature'] ?? '', other, 300));
    assert.throws(() => new Webhook(other).verify(BODY, headers));
  });

  test('a non-integer timestamp is a programming error', () => {
    assert.throws(() => signDelivery(deriveWebhookSecret(MASTER, 'wh_a'), 'dlv_1', BODY, 1.5), TypeError);
  });
});
