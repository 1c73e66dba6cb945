import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import type { LookupAddress } from 'node:dns';
import type http from 'node:http';
import { describe, test } from 'node:test';
import {
  type AllowList,
  type Resolver,
  checkWebhookDestination,
  parseAllowList,
} from '../../src/delivery/destination-guard';
import { type SendWebhookOptions, sendWebhook } from '../../src/delivery/http-sender';
import { deriveWebhookSecret, signDelivery } from '../../src/delivery/signing';
import { type Received, type Receiver, startReceiver, unusedPort } from '../helpers/receiver';
import { REJECTED_URLS } from './rejected-urls';

const NO_ALLOW_LIST = parseAllowList('');
const LOOPBACK = parseAllowList('127.0.0.1');
const BODY = JSON.stringify({ id: '7', type: 'recording.created' });
const SECRET = deriveWebhookSecret(Buffer.alloc(32, 1), 'wh_send');

function send(url: string, extra: Partial<SendWebhookOptions> = {}) {
  return sendWebhook({
    url,
    body: BODY,
    headers: signDelivery(SECRET, 'dlv_1', BODY, Math.floor(Date.now() / 1000)),
    timeoutMs: 2000,
    allow: LOOPBACK,
    ...extra,
  });
}

async function withReceiver<T>(
  answer: (req: Received, res: http.ServerResponse) => void,
  run: (receiver: Receiver) => Promise<T>,
  host?: string,
): Promise<T> {
  const receiver = await startReceiver((req) => (res) => answer(req, res), host);
  try {
    return await run(receiver);
  } finally {
    await receiver.close();
  }
}

/** Counts client sockets node creates while `run` runs. */
async function countSockets(run: () => Promise<void>): Promise<number> {
  let sockets = 0;
  const onSocket = (): void => {
    sockets += 1;
  };
  diagnostics.subscribe('net.client.socket', onSocket);
  try {
    await run();
  } finally {
    diagnostics.unsubscribe('net.client.socket', onSocket);
  }
  return sockets;
}

const resolverThatMustNotRun: Resolver = async () => assert.fail('the resolver must not be asked');

function scriptedResolver(...answers: (readonly LookupAddress[])[]): Resolver & { calls: number } {
  const resolver = async (): Promise<readonly LookupAddress[]> => {
    const answer = answers[Math.min(resolver.calls, answers.length - 1)] ?? [];
    resolver.calls += 1;
    return answer;
  };
  resolver.calls = 0;
  return resolver;
}

describe('sendWebhook refuses, without connecting, every URL creation refuses', () => {
  for (const [rule, url] of REJECTED_URLS) {
    test(`refuses ${rule}: ${url}`, async () => {
      let result: Awaited<ReturnType<typeof sendWebhook>> | undefined;
      const sockets = await countSockets(async () => {
        result = await send(url, { allow: NO_ALLOW_LIST, resolver: resolverThatMustNotRun });
      });
      assert.equal(sockets, 0);
      assert.equal(result?.ok, false);
      assert.equal(result?.statusCode, null);
      assert.match(result?.error ?? '', /^url: /);
    });
  }

  test('an allowed IP does not open its neighbour: 127.0.0.2 listed, 127.0.0.3 refused', async () => {
    const allow = parseAllowList('127.0.0.2');
    await withReceiver(
      (_req, res) => res.end('ok'),
      async (receiver) => {
        assert.equal((await send(`http://127.0.0.2:${receiver.port}/`, { allow })).ok, true);
        const sockets = await countSockets(async () => {
          const refused = await send(`http://127.0.0.3:${receiver.port}/`, { allow });
          assert.match(refused.error ?? '', /^url: /);
        });
        assert.equal(sockets, 0);
      },
      '127.0.0.2',
    );
  });
});

describe('sendWebhook checks the resolved address at connect time', () => {
  test('DNS rebinding: public when the subscription is created, loopback at send: blocked', async () => {
    const resolver = scriptedResolver([{ address: '93.184.216.34', family: 4 }], [{ address: '127.0.0.1', family: 4 }]);
    assert.ok(await checkWebhookDestination('https://hook.example/x', NO_ALLOW_LIST, resolver));
    const result = await send('https://hook.example/x', { allow: NO_ALLOW_LIST, resolver });
    // A connection attempt to 127.0.0.1:443 would have failed differently (refused).
    assert.deepEqual({ ...result, durationMs: 0 }, {
      ok: false,
      statusCode: null,
      error: 'destination blocked: host resolves to a non-public address',
      durationMs: 0,
    });
    assert.equal(resolver.calls, 2);
  });

  test('a host resolving to [public, private] is blocked', async () => {
    const resolver = scriptedResolver([{ address: '93.184.216.34', family: 4 }, { address: '::1', family: 6 }]);
    const result = await send('https://hook.example/', { allow: NO_ALLOW_LIST, resolver });
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /destination blocked/);
  });

  test('a resolver error fails closed', async () => {
    const resolver: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND hook.example'), { code: 'ENOTFOUND' });
    };
    const result = await send('https://hook.example/', { allow: NO_ALLOW_LIST, resolver });
    assert.deepEqual([result.ok, result.statusCode, result.error], [false, null, 'host not found']);
  });

  test('the socket connects to the address the guard checked, not a second lookup', async () => {
    // hook.test exists only in this resolver, so delivery proves the checked answer was used.
    const resolver = scriptedResolver([{ address: '127.0.0.1', family: 4 }]);
    await withReceiver(
      (_req, res) => res.end(),
      async (receiver) => {
        const result = await send(`http://HOOK.test:${receiver.port}/in`, { allow: parseAllowList('hook.test'), resolver });
        assert.equal(result.ok, true, result.error ?? '');
        assert.equal(resolver.calls, 1);
      },
    );
  });
});

describe('sendWebhook against a real local receiver', () => {
  test('a 2xx answer is ok and the receiver gets the exact body and signature headers', async () => {
    await withReceiver(
      (_req, res) => res.writeHead(204).end(),
      async (receiver) => {
        const result = await send(`${receiver.origin}/hooks?x=1`);
        assert.deepEqual([result.ok, result.statusCode, result.error], [true, 204, null]);
        assert.ok(result.durationMs >= 0);
        const [received] = receiver.requests;
        assert.equal(received?.method, 'POST');
        assert.equal(received?.path, '/hooks?x=1');
        assert.equal(received?.body, BODY);
        assert.equal(received?.headers['content-type'], 'application/json');
        assert.match(String(received?.headers['service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
        assert.equal(received?.headers['webhook-id'], 'dlv_1');
      },
    );
  });

  test('a 500 answer is a failed attempt that keeps the status', async () => {
    await withReceiver(
      (_req, res) => res.writeHead(500).end('boom'),
      async (receiver) => {
        const result = await send(`${receiver.origin}/`);
        assert.deepEqual([result.ok, result.statusCode, result.error], [false, 500, 'status 500']);
      },
    );
  });

  test('a 302 is a failed attempt and the redirect target is never requested', async () => {
    await withReceiver(
      (req, res) => {
        if (req.path === '/start') res.writeHead(302, { location: '/target' }).end();
        else res.writeHead(200).end();
      },
      async (receiver) => {
        const result = await send(`${receiver.origin}/start`);
        assert.equal(result.ok, false);
        assert.equal(result.statusCode, 302);
        assert.match(result.error ?? '', /redirect.*not followed/);
        assert.deepEqual(receiver.requests.map((r) => r.path), ['/start']);
      },
    );
  });

  test('a receiver that never answers is cut at timeoutMs', async () => {
    await withReceiver(
      () => {},
      async (receiver) => {
        const started = Date.now();
        const result = await send(`${receiver.origin}/`, { timeoutMs: 300 });
        const elapsed = Date.now() - started;
        assert.deepEqual([result.ok, result.statusCode], [false, null]);
        assert.match(result.error ?? '', /timed out after 300 ms/);
        assert.ok(elapsed >= 280 && elapsed < 1500, `returned after ${elapsed} ms`);
      },
    );
  });

  test('headers followed by a stalled body are cut by the same timeout: a 2xx acknowledged (sent once, not 8 times), another status failed', async () => {
    for (const [status, outcome] of [[200, [true, 200, null]], [503, [false, 503, 'timed out after 300 ms']]] as const) {
      await withReceiver(
        (_req, res) => {
          res.writeHead(status, { 'content-length': '100' });
          res.write('partial');
        },
        async (receiver) => {
          const started = Date.now();
          const result = await send(`${receiver.origin}/`, { timeoutMs: 300 });
          const elapsed = Date.now() - started;
          assert.deepEqual([result.ok, result.statusCode, result.error], outcome);
          assert.ok(elapsed >= 280 && elapsed < 1500, `returned after ${elapsed} ms`);
        },
      );
    }
  });

  test('a large response body is read only up to the cap and does not fail the attempt', async () => {
    await withReceiver(
      (_req, res) => {
        res.writeHead(200);
        res.write(Buffer.alloc(256 * 1024, 'a'));
        // never ends: only the cap, not the timeout, can finish this attempt in time
      },
      async (receiver) => {
        const result = await send(`${receiver.origin}/`, { timeoutMs: 1000 });
        assert.deepEqual([result.ok, result.statusCode, result.error], [true, 200, null]);
        assert.ok(result.durationMs < 900);
      },
    );
  });

  test('connection refused is a failed attempt with an error', async () => {
    const port = await unusedPort();
    const result = await send(`http://127.0.0.1:${port}/`);
    assert.deepEqual([result.ok, result.statusCode, result.error], [false, null, 'connection refused']);
  });

  test('errors never contain the body or the secret', async () => {
    const port = await unusedPort();
    const allow: AllowList = LOOPBACK;
    for (const url of [`http://127.0.0.1:${port}/`, 'https://10.0.0.1/']) {
      const result = await send(url, { allow });
      assert.ok(!result.error?.includes(SECRET) && !result.error?.includes(BODY));
    }
  });
});
