// Versioning: /api/v2/openapi.json (OpenAPI 3.1) and /api/v1/openapi.json (info.version 1.0.0)
// describe every route the app serves, generated from the validating schemas; /docs is an
// interactive page. None of them needs credentials.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness } from '../helpers/harness';

/** Every API operation Hono actually routes, as "METHOD /full/path/{param}". */
function registeredOperations(h: ReturnType<typeof harness>): string[] {
  // The web app's page and assets (src/http/web-app.ts) are not API operations, like /docs.
  const infra = new Set(['/healthz', '/docs', '/api/v2/openapi.json', '/api/v1/openapi.json', '/', '/app/:name', '/favicon.ico']);
  return h.app.routes
    .filter((r) => r.method !== 'ALL' && !infra.has(r.path))
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
    .sort();
}

/** Every operation a document describes, as "METHOD /full/path/{param}". */
function documentedOperations(doc: { servers: Array<{ url: string }>; paths: Record<string, Record<string, unknown>> }): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const servers = item.servers as Array<{ url: string }> | undefined;
    // A server url of '/' (POST /mcp) joins the path without doubling the slash.
    const base = (servers?.[0]?.url ?? doc.servers[0]?.url ?? '').replace(/\/$/, '');
    for (const method of Object.keys(item)) if (method !== 'servers') out.push(`${method.toUpperCase()} ${base}${path}`);
  }
  return out.sort();
}

describe('OpenAPI documents', () => {
  it('/api/v2/openapi.json is OpenAPI 3.1 and needs no credentials', async () => {
    const h = harness();
    const res = await h.req('GET', '/api/v2/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.match(res.json.openapi, /^3\.1\./);
    assert.equal(res.json.servers[0].url, '/api/v2');
    assert.ok(res.json.info.title && res.json.info.version);
  });

  it('/api/v1/openapi.json carries info.version 1.0.0 and needs no credentials', async () => {
    const h = harness();
    const res = await h.req('GET', '/api/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.json.info.version, '1.0.0');
    assert.match(res.json.openapi, /^3\.1\./);
    assert.equal(res.json.servers[0].url, '/api/v1');
  });

  it('every route registered on the app appears in one of the documents, and nothing else does', async () => {
    const h = harness();
    const v2 = (await h.req('GET', '/api/v2/openapi.json')).json;
    const v1 = (await h.req('GET', '/api/v1/openapi.json')).json;
    // The /api/session routes are in both documents (the web app is a v1 client); everything else in one.
    const documented = [...new Set([...documentedOperations(v2), ...documentedOperations(v1)])].sort();
    assert.deepEqual(documented, registeredOperations(h));
    for (const op of ['POST /api/v2/api-keys', 'GET /api/v2/api-keys', 'DELETE /api/v2/api-keys/{id}', 'POST /api/v1/tokens', 'GET /api/v1/tokens', 'POST /api/session', 'DELETE /api/session']) {
      assert.ok(documented.includes(op), op);
    }
    assert.ok(documentedOperations(v1).every((op) => /^\/api\/(v1\/|session$)/.test(op.split(' ')[1] ?? '')));
    for (const op of ['POST /api/session', 'GET /api/session', 'DELETE /api/session']) {
      assert.ok(documentedOperations(v1).includes(op) && documentedOperations(v2).includes(op), `${op} in both documents`);
    }
  });

  it('operations are well formed: unique operationIds, declared path parameters, error envelope', async () => {
    const h = harness();
    for (const version of ['v1', 'v2']) {
      const doc = (await h.req('GET', `/api/${version}/openapi.json`)).json;
      const ids = new Set<string>();
      for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
        for (const [method, op] of Object.entries(item)) {
          if (method === 'servers') continue;
          const id = op.operationId as string;
          assert.ok(id && !ids.has(id), `${version} operationId ${id}`);
          ids.add(id);
          const params = (op.parameters as Array<{ name: string; in: string; required: boolean }>) ?? [];
          for (const [, name] of path.matchAll(/\{(\w+)\}/g)) {
            assert.ok(params.some((p) => p.in === 'path' && p.name === name && p.required), `${method} ${path} declares ${name}`);
          }
          assert.ok((op.responses as Record<string, unknown>).default, `${method} ${path} documents errors`);
          assert.ok(Array.isArray(op.security), `${method} ${path} states its security`);
        }
      }
      assert.ok(doc.components.schemas.Error);
    }
  });

  it('request schemas come from the validating valibot schemas', async () => {
    const h = harness();
    const doc = (await h.req('GET', '/api/v2/openapi.json')).json;
    const schema = doc.paths['/api-keys'].post.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required.sort(), ['name', 'permissions']);
    assert.equal(schema.additionalProperties, false);
    assert.equal(schema.properties.expiry.minimum, 1);
    assert.equal(schema.properties.expiry.maximum, 365);
    assert.ok(schema.properties.permissions.items.enum.includes('events:read'));
    assert.deepEqual(doc.paths['/api-keys'].post.security, [{ session: [] }, { sessionCookie: [] }]);
  });

  it('answers carry the headers their responses declare (ETag, Location, Idempotent-Replayed, RateLimit-*); every error response is the envelope; times and revisions are integers', async () => {
    const h = harness();
    const key = h.key();
    h.services.devices.add(h.accountId, { id: 'ring-1', name: 'My ring', model: 'ring' });
    const doc = (await h.req('GET', '/api/v2/openapi.json')).json;
    const declared = (path: string, method: string, status: number): string[] => Object.keys(doc.paths[path][method].responses[status].headers ?? {});
    const carries = (res: { headers: Headers }, names: string[], what: string) => {
      for (const name of names) assert.ok(res.headers.get(name) !== null, `${what}: ${name} is declared but not sent`);
    };
    const body = { type: 'memo', transcript: 'headers' };
    const created = await h.req('POST', '/api/v2/recordings', { token: key, body, headers: { 'idempotency-key': 'hdr-1' } });
    assert.equal(created.status, 201);
    assert.deepEqual(declared('/recordings', 'post', 201), ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'Location', 'ETag']);
    carries(created, declared('/recordings', 'post', 201), 'create');
    const replayed = await h.req('POST', '/api/v2/recordings', { token: key, body, headers: { 'idempotency-key': 'hdr-1' } });
    assert.equal(replayed.status, 200);
    carries(replayed, declared('/recordings', 'post', 200), 'replay');
    const id = created.json.recording.id as string;
    carries(await h.req('GET', `/api/v2/recordings/${id}`, { token: key }), declared('/recordings/{id}', 'get', 200), 'get');
    carries(await h.req('PATCH', `/api/v2/recordings/${id}`, { token: key, body: { title: 't' }, headers: { 'if-match': '"1"' } }), declared('/recordings/{id}', 'patch', 200), 'patch');
    carries(await h.req('GET', '/api/v2/devices/ring-1/settings', { token: key }), declared('/devices/{id}/settings', 'get', 200), 'settings');
    const v1doc = (await h.req('GET', '/api/v1/openapi.json')).json;
    const wrong = await h.req('POST', '/api/session', { body: { account: 'nobody', password: 'wrong password' } });
    assert.equal(wrong.status, 401);
    const session = v1doc.paths['/session'] ?? doc.paths['/session'];
    assert.ok(session, 'the sign-in is documented');
    assert.ok('RateLimit-Remaining' in session.post.responses[401].headers);
    carries(wrong, Object.keys(session.post.responses[401].headers), 'a refused sign-in');
    const stale = await h.req('PATCH', `/api/v2/recordings/${id}`, { token: key, body: { title: 'u' }, headers: { 'if-match': '"1"' } });
    assert.equal(stale.status, 412);
    carries(stale, declared('/recordings/{id}', 'patch', 412), 'a 412');
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, r] of Object.entries(op.responses ?? {})) {
          if (Number(status) < 400) continue;
          const schema = r.content?.['application/json']?.schema;
          // The one exception: /mcp's 405 is a JSON-RPC error, as MCP clients expect.
          if (path === '/mcp' && status === '405') assert.equal((schema as { properties?: { jsonrpc?: unknown } }).properties?.jsonrpc !== undefined, true);
          else assert.deepEqual(schema, { $ref: '#/components/schemas/Error' }, `${method} ${path} ${status}`);
        }
      }
    }
    const recording = doc.paths['/recordings/{id}'].get.responses[200].content['application/json'].schema.properties.recording.properties;
    for (const field of ['recordedAt', 'updatedAt', 'revision']) assert.equal(recording[field].type, 'integer', field);
  });

  it('/docs answers an HTML reference page without credentials', async () => {
    const h = harness();
    const res = await h.req('GET', '/docs');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.text, /<!doctype html>/i);
    assert.match(res.text, /openapi\.json/);
  });
});

describe('a search page may be short (issue 14: the OpenAPI says so)', () => {
  for (const version of ['v2', 'v1']) {
    it(`${version}: GET /recordings' limit and nextCursor say a page may hold fewer than limit, with a cursor to go on`, async () => {
      const h = harness();
      const doc = (await h.req('GET', `/api/${version}/openapi.json`)).json;
      const op = doc.paths['/recordings'].get;
      const limit = op.parameters.find((p: { name: string }) => p.name === 'limit');
      assert.match(limit.description ?? limit.schema.description, /fewer recordings than limit, or none, with a non-null nextCursor/);
      const page = op.responses['200'].content['application/json'].schema;
      const text = JSON.stringify(page);
      assert.match(text, /fewer than limit recordings, or none/);
    });
  }
});
