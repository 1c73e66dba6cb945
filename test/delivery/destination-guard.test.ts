import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, test } from 'node:test';
import { AppError } from '../../src/errors';
import {
  type AllowList,
  type Resolver,
  checkWebhookDestination,
  checkWebhookTarget,
  guardedLookup,
  isAddressAllowed,
  parseAllowList,
} from '../../src/delivery/destination-guard';
import { ACCEPTED_URLS, REJECTED_URLS } from './rejected-urls';

const NO_ALLOW_LIST = parseAllowList('');
/** The creation-time check by the URL's text alone. */
const checkUrlText = (raw: string, allow: AllowList): URL => checkWebhookTarget(raw, allow, false).url;

const PUBLIC_V4: LookupAddress = { address: '93.184.216.34', family: 4 };
const LOOPBACK_V4: LookupAddress = { address: '127.0.0.1', family: 4 };

/** A resolver answering `answers` in turn (the last one repeats) and counting its calls. */
function scriptedResolver(...answers: (readonly LookupAddress[] | Error)[]): Resolver & { calls: number } {
  const resolver = async (): Promise<readonly LookupAddress[]> => {
    const answer = answers[Math.min(resolver.calls, answers.length - 1)];
    resolver.calls += 1;
    if (answer === undefined || answer instanceof Error) throw answer ?? new Error('no answer');
    return answer;
  };
  resolver.calls = 0;
  return resolver;
}

function assertInvalid(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError, 'an AppError');
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.status, 400);
    assert.match(err.message, message);
    return true;
  });
}

/** Runs a guarded lookup the way node's net module does and returns what it hands the socket. */
function lookupVia(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  all: boolean,
): Promise<string | LookupAddress[]> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all }, (err, address) => (err ? reject(err) : resolve(address)));
  });
}

describe('the URL text check refuses non-public or non-https destinations', () => {
  for (const [rule, url] of REJECTED_URLS) {
    test(`refuses ${rule}: ${url}`, () => {
      assertInvalid(() => checkUrlText(url, NO_ALLOW_LIST), /^url: /);
    });
  }

  test('the table covers at least 30 forms', () => {
    assert.ok(REJECTED_URLS.length >= 30);
  });

  test('messages say why', () => {
    assertInvalid(() => checkUrlText('http://example.com/', NO_ALLOW_LIST), /https/);
    assertInvalid(() => checkUrlText('https://example.com:8443/', NO_ALLOW_LIST), /port 443/);
    assertInvalid(() => checkUrlText('https://u:p@example.com/', NO_ALLOW_LIST), /username or password/);
    assertInvalid(() => checkUrlText('https://localhost/', NO_ALLOW_LIST), /localhost/);
    assertInvalid(() => checkUrlText('https://10.0.0.1/', NO_ALLOW_LIST), /public address/);
  });

  test('a private or local host is refused with a message naming --webhook-allow (a public one is not)', () => {
    for (const url of ['http://192.168.1.5:8123/hook', 'https://10.0.0.1/', 'https://localhost/', 'http://127.0.0.1/', 'https://[::1]:8443/']) {
      assertInvalid(() => checkUrlText(url, NO_ALLOW_LIST), /is a private or local address: list it in --webhook-allow or RECLIB_WEBHOOK_ALLOW \(the server's, or the CLI command's that creates the webhook;/);
    }
    assert.throws(() => checkUrlText('http://example.com/', NO_ALLOW_LIST), (e: Error) => !e.message.includes('--webhook-allow'));
  });
});

describe('the URL text check accepts public https on 443', () => {
  for (const url of ACCEPTED_URLS) {
    test(`accepts ${url}`, () => {
      assert.ok(checkUrlText(url, NO_ALLOW_LIST) instanceof URL);
    });
  }
});

describe('--webhook-allow exempts only the listed destinations', () => {
  test('an allowed IP may use http and any port; its neighbour stays blocked', () => {
    const allow = parseAllowList('127.0.0.2');
    assert.equal(checkUrlText('http://127.0.0.2:8123/hook', allow).port, '8123');
    assertInvalid(() => checkUrlText('http://127.0.0.3:8123/hook', allow), /^url: /);
    assertInvalid(() => checkUrlText('https://127.0.0.3/', allow), /public address/);
    assertInvalid(() => checkUrlText('http://example.com:8123/', allow), /https/);
  });

  test('a hostname entry matches the host text case-insensitively and exempts it entirely', () => {
    const allow = parseAllowList(' Hook.LAN ,');
    assert.ok(checkUrlText('http://hook.lan:8080/x', allow));
    assert.ok(checkUrlText('http://HOOK.lan.:8080/x', allow));
    assertInvalid(() => checkUrlText('http://other.lan:8080/x', allow), /https/);
    assert.equal(isAddressAllowed('192.168.1.5', allow, 'HOOK.LAN'), true);
    assert.equal(isAddressAllowed('192.168.1.5', allow, 'other.lan'), false);
  });

  test('a localhost entry allows localhost and nothing else', () => {
    const allow = parseAllowList('localhost');
    assert.ok(checkUrlText('http://localhost:3000/', allow));
    assertInvalid(() => checkUrlText('http://api.localhost:3000/', allow), /https/);
  });

  test('a CIDR entry covers its range only', () => {
    const allow = parseAllowList('10.1.0.0/16, fd00::/8');
    assert.ok(checkUrlText('http://10.1.2.3:8080/', allow));
    assert.ok(checkUrlText('http://[fd00::5]:8080/', allow));
    assertInvalid(() => checkUrlText('https://10.2.0.1/', allow), /public address/);
    assertInvalid(() => checkUrlText('https://[fc00::1]/', allow), /public address/);
    assert.equal(isAddressAllowed('10.1.255.255', allow), true);
    assert.equal(isAddressAllowed('10.2.0.1', allow), false);
  });

  test('IPv4-mapped forms are normalised on both sides', () => {
    const plain = parseAllowList('127.0.0.2');
    const mapped = parseAllowList('::ffff:127.0.0.2');
    for (const allow of [plain, mapped]) {
      assert.ok(checkUrlText('http://127.0.0.2:1/', allow));
      assert.ok(checkUrlText('http://[::ffff:127.0.0.2]:1/', allow));
      assert.equal(isAddressAllowed('::ffff:127.0.0.2', allow), true);
      assert.equal(isAddressAllowed('127.0.0.2', allow), true);
      assert.equal(isAddressAllowed('::ffff:127.0.0.3', allow), false);
    }
    assert.equal(isAddressAllowed('10.9.9.9', parseAllowList('::ffff:10.0.0.0/104')), true);
  });

  test('an empty list allows nothing extra', () => {
    assert.deepEqual(parseAllowList(''), { hostnames: new Set(), ranges: [], entries: [] });
    assert.deepEqual(parseAllowList(' , ,'), { hostnames: new Set(), ranges: [], entries: [] });
  });

  for (const entry of ['foo bar', '10.0.0.0/33', '10.0.0.0/x', 'http://hook.lan', '*.example.com', 'hook.lan:8080', '127.1', '-bad.lan']) {
    test(`a malformed entry is refused and named: ${entry}`, () => {
      assertInvalid(() => parseAllowList(`hook.lan,${entry}`), new RegExp(`"${entry.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`));
    });
  }
});

describe('isAddressAllowed', () => {
  test('public unicast is allowed without an entry; private, mapped-private and garbage are not', () => {
    assert.equal(isAddressAllowed('93.184.216.34', NO_ALLOW_LIST), true);
    assert.equal(isAddressAllowed('2606:2800:220:1:248:1893:25c8:1946', NO_ALLOW_LIST), true);
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '::7f00:1', '10.0.0.1', '169.254.169.254', 'fe80::1%eth0', 'example.com', '']) {
      assert.equal(isAddressAllowed(address, NO_ALLOW_LIST), false, address);
    }
  });
});

describe('guardedLookup checks the address the socket will use', () => {
  test('hands a public answer to the socket in both lookup modes, resolving once each', async () => {
    const resolver = scriptedResolver([PUBLIC_V4]);
    const lookup = guardedLookup(NO_ALLOW_LIST, resolver);
    assert.deepEqual(await lookupVia(lookup, 'hook.example', true), [PUBLIC_V4]);
    assert.equal(await lookupVia(lookup, 'hook.example', false), PUBLIC_V4.address);
    assert.equal(resolver.calls, 2);
  });

  test('DNS rebinding: public at creation, loopback at send is blocked', async () => {
    const resolver = scriptedResolver([PUBLIC_V4], [LOOPBACK_V4]);
    const url = await checkWebhookDestination('https://hook.example/x', NO_ALLOW_LIST, resolver);
    assert.equal(url.hostname, 'hook.example');
    await assert.rejects(lookupVia(guardedLookup(NO_ALLOW_LIST, resolver), 'hook.example', true), /non-public/);
    assert.equal(resolver.calls, 2);
  });

  test('one private address among public ones blocks the host', async () => {
    const resolver = scriptedResolver([PUBLIC_V4, { address: '10.0.0.7', family: 4 }]);
    await assert.rejects(lookupVia(guardedLookup(NO_ALLOW_LIST, resolver), 'hook.example', true), /non-public/);
    await assert.rejects(checkWebhookDestination('https://hook.example/', NO_ALLOW_LIST, resolver), AppError);
  });

  test('a resolver error fails closed', async () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND hook.example'), { code: 'ENOTFOUND' });
    const lookup = guardedLookup(NO_ALLOW_LIST, scriptedResolver(failure));
    await assert.rejects(lookupVia(lookup, 'hook.example', true), /ENOTFOUND/);
    await assert.rejects(lookupVia(guardedLookup(NO_ALLOW_LIST, scriptedResolver([])), 'hook.example', false), /no addresses/);
  });

  test('a listed hostname or range may resolve to a private address', async () => {
    const resolver = scriptedResolver([LOOPBACK_V4]);
    assert.deepEqual(await lookupVia(guardedLookup(parseAllowList('HOOK.test'), resolver), 'hook.test', true), [LOOPBACK_V4]);
    assert.deepEqual(await lookupVia(guardedLookup(parseAllowList('127.0.0.0/8'), resolver), 'any.example', true), [LOOPBACK_V4]);
  });

  test('creation does not refuse a URL whose lookup fails; send time fails closed instead', async () => {
    const resolver = scriptedResolver(new Error('offline'));
    assert.ok(await checkWebhookDestination('https://hook.example/', NO_ALLOW_LIST, resolver));
  });
});
