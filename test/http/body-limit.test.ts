// docs/decisions.md §20: JSON request bodies up to 1,500,000 bytes; larger ones are 413 payload_too_large,
// whether they carry a Content-Length or arrive chunked, and the rest is not read. Malformed JSON
// is 400 invalid_request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_JSON_BYTES } from '../../src/http/body';
import { harness as baseHarness } from '../helpers/harness';
import { mountProbe } from '../helpers/probe-routes';

const harness = () => {
  const h = baseHarness();
  mountProbe(h);
  return h;
};

/** A JSON body of exactly `bytes` bytes: {"text":"aaa…"} */
const jsonOfSize = (bytes: number) => `{"text":"${'a'.repeat(bytes - 11)}"}`;

/** A chunked body (no Content-Length) that counts how much of it the server pulled. */
function countingStream(total: number, chunk = 64 * 1024) {
  const text = new TextEncoder().encode(jsonOfSize(total));
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= text.length) return controller.close();
      const part = text.subarray(state.pulled, state.pulled + chunk);
      state.pulled += part.length;
      controller.enqueue(part);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

async function post(h: ReturnType<typeof harness>, token: string, body: string | Uint8Array | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  const res = await h.app.request('http://127.0.0.1:8080/probe/echo', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as { error?: { code: string }; length?: number }, headers: res.headers };
}

describe('413 payload_too_large above 1,500,000 bytes', () => {
  it('a body of exactly 1,500,000 bytes is accepted', async () => {
    const h = harness();
    const body = jsonOfSize(MAX_JSON_BYTES);
    assert.equal(Buffer.byteLength(body), 1_500_000);
    const res = await post(h, h.key(), body);
    assert.equal(res.status, 200, res.text.slice(0, 200));
    assert.equal(res.json.length, 1_500_000 - 11);
  });

  it('a body of 1,500,001 bytes is 413 payload_too_large', async () => {
    const h = harness();
    const res = await post(h, h.key(), jsonOfSize(MAX_JSON_BYTES + 1));
    assert.equal(res.status, 413);
    assert.equal(res.json.error?.code, 'payload_too_large');
    assert.ok(res.headers.get('x-request-id'));
  });

  it('a chunked body without Content-Length of exactly 1,500,000 bytes is accepted', async () => {
    const h = harness();
    const { stream } = countingStream(MAX_JSON_BYTES);
    const res = await post(h, h.key(), stream);
    assert.equal(res.status, 200, res.text.slice(0, 200));
  });

  it('a chunked body without Content-Length of 1,500,001 bytes is 413', async () => {
    const h = harness();
    const { stream } = countingStream(MAX_JSON_BYTES + 1);
    const res = await post(h, h.key(), stream);
    assert.equal(res.status, 413);
    assert.equal(res.json.error?.code, 'payload_too_large');
  });

  it('an endless chunked body is cut off once the limit is crossed, not read to the end', async () => {
    const h = harness();
    const { stream, state } = countingStream(50_000_000);
    const res = await post(h, h.key(), stream);
    assert.equal(res.status, 413);
    assert.ok(state.pulled < MAX_JSON_BYTES + 4 * 64 * 1024, `pulled ${state.pulled} bytes`);
    assert.ok(state.cancelled, 'the stream was cancelled');
  });

  it('a declared Content-Length over the limit is refused before reading', async () => {
    const h = harness();
    const { stream, state } = countingStream(MAX_JSON_BYTES + 100);
    const res = await post(h, h.key(), stream, { 'content-length': String(MAX_JSON_BYTES + 100) });
    assert.equal(res.status, 413);
    assert.ok(state.pulled <= 64 * 1024, `pulled ${state.pulled} bytes (a stream pre-fills one chunk by itself)`);
  });

  it('the limit applies to key routes, session routes and the login route alike', async () => {
    const h = harness();
    const big = `{"name":"x","permissions":["events:read"]}${' '.repeat(MAX_JSON_BYTES)}`;
    const res = await h.req('POST', '/api/v2/api-keys', { token: h.session, body: big });
    assert.equal(res.status, 413);
    const exact = `{"name":"x","permissions":["events:read"]}`;
    const padded = exact + ' '.repeat(MAX_JSON_BYTES - exact.length);
    assert.equal((await h.req('POST', '/api/v2/api-keys', { token: h.session, body: padded })).status, 201);
    const login = await h.req('POST', '/api/session', { body: `{"account":"a","password":"${'p'.repeat(MAX_JSON_BYTES)}"}` });
    assert.equal(login.status, 413);
  });
});

describe('malformed request bodies are 400 invalid_request', () => {
  it('malformed JSON is 400 invalid_request', async () => {
    const h = harness();
    const token = h.key();
    for (const body of ['{', '{"text":', 'nope', '{"text":"a"}}', "{'text':'a'}", '\u0000']) {
      const res = await h.req('POST', '/probe/echo', { token, body });
      assert.equal(res.status, 400, body);
      assert.equal(res.json.error.code, 'invalid_request');
      assert.match(res.json.error.message, /JSON/);
    }
  });

  it('invalid UTF-8 is 400, a missing body is 400, a non-JSON content type is 400', async () => {
    const h = harness();
    const token = h.key();
    const bad = await post(h, token, new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]));
    assert.equal(bad.status, 400);
    const missing = await h.req('POST', '/probe/echo', { token });
    assert.equal(missing.status, 400);
    assert.match(missing.json.error.message, /body/);
    const form = await h.req('POST', '/probe/echo', { token, body: 'text=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(form.status, 400);
  });

  it('a schema violation names the field', async () => {
    const h = harness();
    const res = await h.req('POST', '/probe/echo', { token: h.key(), body: { text: 5 } });
    assert.equal(res.status, 400);
    assert.match(res.json.error.message, /body\.text/);
    const unknown = await h.req('POST', '/probe/echo', { token: h.key(), body: { text: 'a', other: 1 } });
    assert.match(unknown.json.error.message, /body\.other: unknown field/);
  });
});
