// The README's receiver is real code: run it and let the scheduler deliver to it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { harness } from '../helpers/harness';
import { unusedPort } from '../helpers/receiver';
import { ROOT } from '../helpers/bundle';

function readmeReceiver(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /### Verifying the signature[\s\S]*?```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(m?.[1], 'README has the receiver example');
  return m[1];
}

test('the README receiver verifies a real delivery and refuses a tampered one (5-minute tolerance both ways)', async (t) => {
  const code = readmeReceiver();
  assert.ok(code.trim().split('\n').length <= 16);
  const port = await unusedPort();
  const h = harness({ webhookAllow: '127.0.0.1' });
  h.clock.set(Date.now());
  const { secret } = await h.services.webhooks.create(h.accountId, { url: `http://127.0.0.1:${port}/hook`, events: ['recording.created'] });
  const child = spawn(process.execPath, ['--input-type=module', '-e', code.replace('.listen(8000)', `.listen(${port})`)], {
    env: { ...process.env, RECLIB_WEBHOOK_SECRET: secret },
  });
  t.after(() => child.kill());
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const post = (body: string, signature: string) =>
    fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', body, headers: { 'service-signature': signature } }).then((r) => r.status);
  for (let i = 0; i < 50; i++) {
    if ((await post('{}', 't=0,v1=x').catch(() => 0)) === 400) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  h.services.core.writer.write(() => h.services.events.emit(h.accountId, 'recording.created', 'rec_readme', 1, h.clock.now()));
  await h.services.webhooks.scheduler.processAll();
  const [row] = h.services.webhooks.deliveries.forRecording(h.accountId, 'rec_readme');
  assert.equal(row?.status, 'delivered', row?.last_error ?? '');
  for (let i = 0; i < 40 && !out.includes('rec_readme'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.match(out, /rec_readme/);

  // Tampered body, and the right signature six minutes early or late: refused.
  const { signDelivery } = await import('../../src/delivery/signing');
  const body = row?.body ?? '';
  const sig = (offsetSec: number) => signDelivery(secret, 'x', body, Math.floor(Date.now() / 1000) + offsetSec)['service-signature'] ?? '';
  assert.equal(await post(body.replace('rec_readme', 'rec_other'), sig(0)), 400);
  assert.equal(await post(body, sig(-360)), 400);
  assert.equal(await post(body, sig(360)), 400);
  assert.equal(await post(body, sig(-240)), 204);
  assert.equal(await post(body, sig(240)), 204);
  // A forged signature of 64 characters that are not ASCII (the header's bytes read as latin1, 128
  // bytes once encoded): refused, and the receiver still answers afterwards (it once crashed).
  assert.equal(await post(body, `t=${Math.floor(Date.now() / 1000)},v1=${'\u00e9'.repeat(64)}`), 400);
  assert.equal(await post(body, sig(0)), 204);
});
