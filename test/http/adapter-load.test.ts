// The node server loads its adapter (@hono/node-server) after its first answers
// (src/http/node-server.ts). An install missing the adapter's file must not take the server down
// through an unhandled rejection: the requests that need it get a 503 envelope, /healthz still
// answers, and a later request loads it once it can be read again.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { testConfig } from '../../src/config';
import { createNodeServer } from '../../src/http/node-server';

describe('an adapter that cannot be loaded', () => {
  it('is a 503 envelope with Retry-After and a request id, not a crash; the next request tries again', async (t) => {
    let fail = true;
    let loads = 0;
    const load = async () => {
      loads++;
      if (fail) throw new Error("Cannot find module '/srv/reclib/dist/chunk-X.mjs'");
      return import('@hono/node-server');
    };
    const direct = (req: { url?: string }, res: import('node:http').ServerResponse) => {
      if (req.url !== '/healthz') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return true;
    };
    const server = createNodeServer(() => new Response('from the app'), '127.0.0.1', testConfig(), undefined, direct, load);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const refused = await fetch(`${base}/api/v2/recordings`);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.headers.get('x-request-id') ?? '', /^req_/);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'unavailable');
    assert.match(body.error.message, /could not load its HTTP layer \(Cannot find module/);
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'answers given before the adapter still work');
    assert.equal((await fetch(`${base}/api/v2/recordings`)).status, 503);
    const tries = loads;
    assert.ok(tries >= 2, 'each request tried to load it again');

    fail = false;
    const served = await fetch(`${base}/api/v2/recordings`);
    assert.equal(served.status, 200);
    assert.equal(await served.text(), 'from the app');
    assert.equal(loads, tries + 1);
  });
});
