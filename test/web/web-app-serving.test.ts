// Serving the web app (docs/decisions.md §8): GET / is the app's HTML for everyone with
// the security headers; /app/<hashed name> assets are immutable and compressed; an unknown /app
// path is a 404 in the error envelope; API routes are unchanged. Needs a build (npm test builds).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, it } from 'node:test';
import { ensureBundle, ROOT } from '../helpers/bundle';
import { harness } from '../helpers/harness';

const manifest = () => {
  ensureBundle();
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/app/manifest.json'), 'utf8')) as { script: string; style: string; icon: string; files: string[] };
};

function assertHtmlSecurity(headers: Headers): void {
  const csp = headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.equal(headers.get('referrer-policy'), 'same-origin');
}

describe('web app serving', () => {
  it('GET / answers the app page to anyone (no session) with CSP, frame-ancestors and Referrer-Policy', async () => {
    const h = harness();
    const m = manifest();
    const res = await h.req('GET', '/');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assertHtmlSecurity(res.headers);
    assert.ok(res.text.includes(`<script type="module" src="/app/${m.script}"></script>`));
    assert.ok(res.text.includes(`href="/app/${m.style}"`));
    assert.doesNotMatch(res.text, /<script>|<style>|style="|https?:\/\//, 'no inline code, nothing from elsewhere');
    assert.ok(res.headers.get('x-request-id'));
  });

  it('assets have hashed names, Cache-Control immutable, and are sent brotli or gzip compressed as accepted', async () => {
    const h = harness();
    const m = manifest();
    for (const name of [m.script, m.style, m.icon]) assert.match(name, /-[A-Z0-9a-z]{8}\.(js|css|svg)$/);
    const raw = fs.readFileSync(path.join(ROOT, 'dist/app', m.script));

    const br = await h.app.request(`/app/${m.script}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(br.status, 200);
    assert.equal(br.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(br.headers.get('content-encoding'), 'br');
    assert.match(br.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(br.headers.get('vary') ?? '', /accept-encoding/i);
    assert.deepEqual(zlib.brotliDecompressSync(Buffer.from(await br.arrayBuffer())), raw);

    const gz = await h.app.request(`/app/${m.script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers.get('content-encoding'), 'gzip');
    assert.deepEqual(zlib.gunzipSync(Buffer.from(await gz.arrayBuffer())), raw);

    const plain = await h.app.request(`/app/${m.style}`);
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.match(plain.headers.get('content-type') ?? '', /^text\/css/);
    assert.equal(await plain.text(), fs.readFileSync(path.join(ROOT, 'dist/app', m.style), 'utf8'));
  });

  it('an unknown /app path is a 404 in the error envelope; API routes and their 404s are unchanged', async () => {
    const h = harness();
    for (const p of ['/app/main-NOPE1234.js', '/app/manifest.json', '/app/', '/app/x/y.js']) {
      const res = await h.req('GET', p);
      assert.equal(res.status, 404, p);
      assert.equal(res.json.error.code, 'not_found', p);
    }
    assert.equal((await h.req('GET', '/api/v2/recordings', { token: h.session })).status, 200);
    assert.equal((await h.req('GET', '/api/v2/nothing-here')).json.error.code, 'not_found');
    assert.equal((await h.req('GET', '/healthz')).json.status, 'ok');
  });

  it('/favicon.ico answers the app icon', async () => {
    const h = harness();
    const res = await h.app.request('/favicon.ico');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/svg+xml');
    assert.match(await res.text(), /^<svg/);
  });

  it('/docs is an HTML page with the same policy: its own inline blocks allowed by hash only', async () => {
    const h = harness();
    const res = await h.req('GET', '/docs');
    assert.equal(res.status, 200);
    assertHtmlSecurity(res.headers);
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
  });

  it('the JavaScript shipped stays within 60 KB gzipped', () => {
    const m = manifest();
    const total = m.files.filter((f) => f.endsWith('.js')).reduce((n, f) => n + fs.statSync(path.join(ROOT, 'dist/app', `${f}.gz`)).size, 0);
    assert.ok(total > 1000 && total <= 60 * 1024, `${total} bytes`);
  });
});
