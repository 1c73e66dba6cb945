// A fresh in-memory reclib per test: services, the Hono app, a fake clock, and helpers to make
// an account with a key or a session and to send JSON requests through app.request().
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../../src/clock';
import { testConfig, type Config } from '../../src/config';
import type { Core } from '../../src/context';
import { openDatabase } from '../../src/db/open';
import { Writer } from '../../src/db/writer';
import type { Resolver } from '../../src/delivery/destination-guard';
import { createApp } from '../../src/http/app';
import { Metrics } from '../../src/observe/metrics';
import { PERMISSIONS, type Permission } from '../../src/permissions';
import { createServices } from '../../src/services';
import { SEARCH_BUDGET } from '../../src/services/recording-search';
import { MetricsStore } from '../../src/store/metrics-store';

/**
 * The harness's DNS: localhost is loopback, every other name does not exist. Webhook creation
 * resolves hostnames, so tests never wait on (or depend on) the machine's resolver; a test about
 * DNS answers passes its own resolver.
 */
export const noDns: Resolver = async (hostname) => {
  if (hostname === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

export interface Harness {
  clock: FakeClock;
  services: ReturnType<typeof createServices>;
  app: ReturnType<typeof createApp>['app'];
  /** Everything createApp built (deps, OpenAPI docs), e.g. to mount a probe route before the first request. */
  http: ReturnType<typeof createApp>;
  config: Config;
  errors: string[];
  accountId: string;
  /** A session token of the account (every permission, session-only routes). */
  session: string;
  /** Creates a key of the account with the given permissions (default: all). */
  key(permissions?: readonly Permission[], name?: string): string;
  /** Sends a request; body objects are JSON-encoded. */
  req(method: string, path: string, opts?: { token?: string | undefined; body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary shapes
}

/** `core` overrides parts of the Core (e.g. fake repeating timers for the event stream). */
export function harness(over: Partial<Config> = {}, coreOver: Partial<Pick<Core, 'timers'>> = {}): Harness {
  const clock = new FakeClock();
  const config = testConfig(over);
  const db = openDatabase(config.db);
  const core: Core = { db, writer: new Writer(db, undefined, clock), clock, config, masterSecret: randomBytes(32), resolver: noDns, ...coreOver };
  const services = createServices(core);
  // The search budget's time bound on the fake clock, which stands still during a request: a page
  // ends at its candidate bound only, whatever the machine's speed. On the system clock a page of
  // more than minCandidates rows read was cut short whenever 3 ms passed (a loaded CI machine),
  // and a test expecting every match on one page failed. Tests of the time bound set their own.
  services.recordings.searchBudget = { ...SEARCH_BUDGET, now: () => clock.now() };
  const errors: string[] = [];
  const metrics = config.metricsToken ? new Metrics(new MetricsStore(db), config.db) : undefined;
  const http = createApp(services, { logError: (l) => errors.push(l), ...(metrics ? { metrics } : {}) });
  const { app } = http;
  const account = services.auth.createAccount('test', 'correct horse');
  const session = services.auth.createSession(account.id).token;
  return {
    clock,
    services,
    app,
    http,
    config,
    errors,
    accountId: account.id,
    session,
    key(permissions = PERMISSIONS, name = 'test key') {
      return services.auth.createKey(account.id, { name, permissions: [...permissions] }).secret;
    },
    async req(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.request(`http://127.0.0.1:8080${path}`, { method, headers, body });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
  };
}
