// The web app's settings pages in a real browser (docs/decisions.md §8): devices (a select per
// input, Save with If-Match), API keys (the secret once, Copy, last use, Revoke behind a dialog), webhooks (the
// secret once, a refused URL shows the server's message, Send test, the delivery log, Disable behind a dialog,
// text mode with a rule) and a recording's deliveries with the resend of a failed one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { cliJson } from '../../helpers/bundle';
import { createRecording, focusAsDialogLeaves, launchBrowser, openPage, screens, signIn, startWebServer, waitUntil, type WebServer } from '../../helpers/browser';
import { startReceiver, type Receiver } from '../../helpers/receiver';

describe('web app: devices, API keys, webhooks and deliveries', () => {
  let server: WebServer;
  let browser: Browser;
  let receiver: Receiver;
  let page: Page;
  let foreign: string[];
  let consoleErrors: string[];

  before(async () => {
    // /fail always answers 500; everything else 200.
    receiver = await startReceiver((req) => (req.path.startsWith('/fail') ? 500 : 200));
    [server, browser] = await Promise.all([
      startWebServer(['--rate-limit', '100000', '--webhook-allow', '127.0.0.1', '--delivery-backoff-ms', '1', '--delivery-per-minute', '1000']),
      launchBrowser(),
    ]);
    ({ page, foreign, consoleErrors } = await openPage(browser, server.url));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await cliJson(['devices', 'add', '--db', server.db, '--account', server.accountId, '--id', 'ring-1', '--name', 'Everyday ring', '--model', 'ring']);
    await cliJson(['devices', 'add', '--db', server.db, '--account', server.accountId, '--id', 'pin-1', '--name', 'Lapel pin', '--model', 'pin']);
    await signIn(page, server);
    await page.getByText('No recordings yet.').waitFor();
    await screens(page, 'library-empty');
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  it('devices: each input has a clip/memo select; Save sends If-Match and a concurrent change gives an alert', async () => {
    await page.getByRole('link', { name: 'Devices' }).click();
    const ring = page.getByRole('region', { name: 'Everyday ring' });
    const pin = page.getByRole('region', { name: 'Lapel pin' });
    // Each card loads its own settings: wait for both before counting.
    await ring.getByLabel('Double tap').waitFor();
    await pin.getByLabel('Record button').waitFor();
    assert.equal(await ring.getByRole('combobox').count(), 4, 'hold, doubleTap, tripleTap, appRecord');
    assert.equal(await pin.getByRole('combobox').count(), 2, 'recordButton, appRecord');
    await screens(page, 'devices');

    // doubleTap defaults to memo.
    // Named once ("Double tap"), though the API's name is shown beside it.
    assert.equal(await ring.getByRole('combobox', { name: 'Double tap', exact: true }).count(), 1);
    await ring.getByLabel('Double tap').selectOption('clip');
    await ring.getByRole('button', { name: 'Save' }).click();
    await ring.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const settings = await server.api('GET', '/api/v2/devices/ring-1/settings');
    assert.equal(settings.json.settings.inputs.doubleTap, 'clip');

    const changed = await server.api('PATCH', '/api/v2/devices/ring-1/settings', { inputs: { hold: 'memo' } }, { 'if-match': settings.headers.get('etag')! });
    assert.equal(changed.status, 200);
    await ring.getByLabel('Triple tap').selectOption('clip');
    await ring.getByRole('button', { name: 'Save' }).click();
    await ring.getByRole('alert').waitFor();
    assert.match(await ring.getByRole('alert').innerText(), /changed/);
    await screens(page, 'devices-conflict');
    assert.equal((await server.api('GET', '/api/v2/devices/ring-1/settings')).json.settings.inputs.tripleTap, 'memo', 'nothing overwritten');
    await ring.getByRole('button', { name: 'Reload' }).click();
    await ring.getByRole('alert').waitFor({ state: 'detached' });
    // The alert goes at once; the settings arrive with the reload's answer (slow on a busy machine).
    await waitUntil(async () => (await ring.getByLabel('Hold').inputValue()) === 'memo', 'the form shows the newer settings');
  });

  it('library: the Device and Status filters narrow the list; an empty result says what to do and clears', async () => {
    const capture = await server.api('POST', '/api/v1/recordings', { kind: 'clip', title: 'From the ring', transcript: 'Captured on the ring.', deviceId: 'ring-1' }, { 'idempotency-key': 'ring-capture-1' });
    assert.equal(capture.status, 200, JSON.stringify(capture.json));
    await createRecording(server, { type: 'memo', title: 'Typed elsewhere', transcript: 'No device.' });
    await page.getByRole('link', { name: 'Library' }).click();
    await page.getByRole('article').filter({ hasText: 'Typed elsewhere' }).waitFor();
    await page.getByLabel('Device').selectOption({ label: 'Everyday ring' });
    await waitUntil(async () => (await page.getByRole('article').count()) === 1, 'only the ring capture is left');
    assert.match(await page.getByRole('article').innerText(), /From the ring/);
    // Its page names the device, the id beside the name.
    await page.getByRole('article').getByRole('link').click();
    await page.getByText('Everyday ring ring-1').waitFor();
    await page.goBack();
    await waitUntil(async () => (await page.getByRole('article').count()) === 1, 'back to the ring capture alone');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No recordings match.').waitFor();
    await page.getByRole('button', { name: 'Clear search and filters' }).click();
    await waitUntil(async () => (await page.getByRole('article').count()) === 2, 'both recordings are back');
  });

  let keySecret = '';
  it('API keys: Create key shows the secret once with Copy; the table lists the key with its last use; Revoke refuses it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No API keys yet.').waitFor();
    await screens(page, 'keys-empty');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('Name').fill('Phone app');
    await page.getByRole('checkbox', { name: 'recordings:read' }).check();
    await page.getByRole('checkbox', { name: 'events:read' }).check();
    await page.getByLabel('Expiry (days)').fill('30');
    await screens(page, 'keys-form');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const secret = page.getByLabel('Secret');
    await secret.waitFor();
    keySecret = await secret.inputValue();
    assert.match(keySecret, /^rlk_/);
    assert.equal(await secret.textContent(), keySecret);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), keySecret);
    await screens(page, 'keys-secret');

    const row = page.getByRole('row').filter({ hasText: 'Phone app' });
    await row.waitFor();
    assert.match(await row.innerText(), /Never/);
    // Used once by an app, the key shows its last use after a reload; the secret is gone for good.
    const used = await fetch(`${server.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${keySecret}` } });
    assert.equal(used.status, 200);
    await page.reload();
    await row.waitFor();
    assert.doesNotMatch(await row.innerText(), /Never/);
    assert.equal(await page.getByLabel('Secret').count(), 0);
    assert.equal(await page.getByText(keySecret).count(), 0);
    await screens(page, 'keys');

    // Revoke asks first (it cannot be undone): Cancel keeps the key.
    await row.getByRole('button', { name: 'Revoke' }).click();
    const ask = page.getByRole('dialog', { name: /^Revoke the key/ });
    await ask.waitFor();
    await screens(page, 'keys-revoke-dialog');
    assert.equal(await focusAsDialogLeaves(page, () => ask.getByRole('button', { name: 'Cancel' }).click()), 'Revoke', 'focus is back on the Revoke that asked');
    assert.equal(await page.getByRole('dialog').count(), 0);
    assert.equal((await fetch(`${server.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${keySecret}` } })).status, 200, 'not revoked');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await fetch(`${server.url}/api/v2/recordings`, { headers: { authorization: `Bearer ${keySecret}` } });
    assert.equal(refused.status, 401);
  });

  it('webhooks: a refused URL shows the server message; Create shows the secret once; Send test is delivered; Disable', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    await screens(page, 'webhooks-empty');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByLabel('URL').fill('http://10.20.30.40/hook');
    await page.getByRole('checkbox', { name: 'recording.created' }).check();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    const expected = await server.api('POST', '/api/v1/webhooks', { url: 'http://10.20.30.40/hook', events: ['recording.created'] });
    assert.equal(expected.status, 400);
    assert.equal(await refusal.innerText(), expected.json.error.message);
    assert.match(expected.json.error.message, /--webhook-allow/, 'a private address: the message says how to allow it');
    await screens(page, 'webhooks-refused');

    await page.getByLabel('URL').fill(`${receiver.origin}/ok`);
    await page.getByRole('checkbox', { name: 'recording.updated' }).check();
    assert.equal(await page.getByLabel('Payload mode').inputValue(), 'default');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const secret = page.getByLabel('Secret');
    await secret.waitFor();
    assert.match(await secret.inputValue(), /^whsec_/);
    await screens(page, 'webhooks-secret');
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByLabel('Secret').count(), 0);

    const card = page.getByRole('region', { name: `${receiver.origin}/ok` });
    await card.waitFor();
    assert.match(await card.innerText(), /active/);
    await card.getByRole('button', { name: 'Send test' }).click();
    await card.getByRole('listitem').filter({ hasText: 'delivered' }).waitFor({ timeout: 15_000 });
    const item = await card.getByRole('listitem').first().innerText();
    assert.match(item, /webhook\.test/);
    assert.match(item, /1 attempt/);
    assert.match(item, /last code 200/);
    assert.ok(receiver.bodies().some((b) => b.type === 'webhook.test'));
    await screens(page, 'webhooks');

    await card.getByRole('button', { name: 'Disable' }).click();
    const disable = page.getByRole('dialog', { name: 'Disable this webhook?' });
    await disable.waitFor();
    await disable.getByRole('button', { name: 'Disable' }).click();
    await waitUntil(async () => (await card.getByRole('button', { name: 'Send test' }).count()) === 0, 'the subscription is disabled');
    const listed = await server.api('GET', '/api/v1/webhooks');
    assert.ok(listed.json.webhooks.every((w: { url: string; status: string }) => !w.url.endsWith('/ok') || w.status === 'disabled'));
  });

  it('webhooks: text mode with a capture rule is created from the rule fields', async () => {
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByLabel('URL').fill(`${receiver.origin}/text`);
    await page.getByLabel('Payload mode').selectOption('text');
    await page.getByLabel('Prefix').fill('todo');
    await page.getByLabel('Capture input').selectOption('hold');
    await screens(page, 'webhooks-text-form');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByLabel('Secret').waitFor();
    const hook = (await server.api('GET', '/api/v1/webhooks')).json.webhooks.find((w: { url: string }) => w.url.endsWith('/text'));
    assert.equal(hook.payloadMode, 'text');
    assert.deepEqual(hook.rules, { prefix: 'todo', captureInput: 'hold' });
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('region', { name: `${receiver.origin}/text` }).getByText('prefix = todo').waitFor();
  });

  it('webhooks: a card with a queued delivery looks again at a slowing pace (2 s, then 4, 8…), and keeps looking', async () => {
    const hook = (await server.api('GET', '/api/v1/webhooks')).json.webhooks.find((w: { url: string }) => w.url.endsWith('/text'));
    // Its delivery stays queued (a receiver whose retries wait for hours, say).
    const queued = { deliveries: [{ id: 'dlv_held', webhookId: hook.id, recordingId: 'rec_x', type: 'webhook.test', status: 'queued', attempts: 1, lastStatusCode: 500, lastError: null, createdAt: Date.now(), updatedAt: Date.now() }], nextCursor: null };
    const looks: number[] = [];
    await page.route(`**/api/v1/webhooks/${hook.id}/deliveries*`, (route) => {
      looks.push(Date.now());
      return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(queued) });
    });
    try {
      await page.goto(`${server.url}/#/webhooks`);
      await page.reload();
      await page.getByRole('region', { name: `${receiver.origin}/text` }).getByText('queued').waitFor();
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      // The first look, then at ~2, ~6 and ~14 s: 4 (every 2 s would be 8; stopping after one, 2).
      assert.ok(looks.length >= 3 && looks.length <= 5, `${looks.length} looks in 15 s`);
      const gaps = looks.slice(1).map((t, i) => t - looks[i]!);
      assert.ok(gaps.every((g, i) => i === 0 || g > gaps[i - 1]! * 1.5), `growing gaps: ${gaps.join(', ')} ms`);
    } finally {
      await page.unroute(`**/api/v1/webhooks/${hook.id}/deliveries*`);
    }
  });

  it("a recording's page lists its deliveries; a failed one can be resent", async () => {
    const hook = await server.api('POST', '/api/v1/webhooks', { url: `${receiver.origin}/fail`, events: ['recording.created'] });
    assert.equal(hook.status, 200);
    const rec = await createRecording(server, { type: 'memo', title: 'Sent somewhere', transcript: 'A recording for the receiver.' });
    // Eight attempts with a 1 ms backoff: failed within moments.
    let seen: unknown;
    await waitUntil(async () => {
      seen = (await server.api('GET', `/api/v1/recordings/${rec.id}/deliveries`)).json.deliveries;
      return (seen as { status: string }[] | undefined)?.[0]?.status === 'failed';
    }, () => `the delivery has failed (last seen: ${JSON.stringify(seen)})`, 30_000);
    await page.goto(`${server.url}/#/recordings/${rec.id}`);
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    // Seen once on Node 24 under a full test run: no "failed" within 30 s though the API said so.
    // What the page showed instead goes into the error.
    await deliveries
      .getByText('failed')
      .waitFor()
      .catch(async (e: Error) => {
        const shown = await page.locator('main').innerText({ timeout: 1_000 }).catch(() => '(nothing)');
        throw new Error(`${e.message}\nthe page (${page.url()}) shows:\n${shown}`);
      });
    assert.match(await deliveries.innerText(), /8 attempts/);
    assert.match(await deliveries.innerText(), /last code 500/);
    await screens(page, 'recording-deliveries');
    await deliveries.getByRole('button', { name: 'Resend' }).click();
    await deliveries.getByRole('status').filter({ hasText: 'Queued again' }).waitFor();
    const after = (await server.api('GET', `/api/v1/recordings/${rec.id}/deliveries`)).json.deliveries;
    assert.equal(after.length, 2);
    assert.equal(after[1].trigger, 'manual');
  });

  it('no request left the server origin and the page logged no unexpected errors', () => {
    assert.deepEqual(foreign, []);
    // Expected: the session check before sign-in (401), the refused webhook URL (400), the settings conflict (412).
    assert.deepEqual(consoleErrors.filter((e) => !/status of (400|401|412)/.test(e)), []);
  });
});
