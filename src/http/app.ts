// The Hono application: request ids, the one error map, health, OpenAPI, docs, and the v1/v2
// sub-apps. createApp() takes services so tests drive it through app.request() on a fresh db.
import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { TrieRouter } from 'hono/router/trie-router';
import { AppError, errorStatus, type ErrorCode } from '../errors';
import type { Services } from '../services';
import type { Metrics } from '../observe/metrics';
import { docsPage } from './docs-page';
import { healthBody } from './health';
import type { AppEnv, HttpDeps, WriteForwarder } from './env';
import { registerMetricsRoute } from './metrics-route';
import { registerMcp } from './mcp-route';
import { OpenApiDoc } from './openapi';
import { RateLimiter } from './rate-limit';
import { ApiRouter, jsonAnswer, plainJsonRoute, plainRoute, setRequestId } from './router';
import { registerSessionRoutes } from './session-routes';
import { registerV1 } from './v1';
import { registerV2 } from './v2';
import { cspWithInlineHashes, htmlHeaders, registerWebApp } from './web-app';

export function errorResponse(c: Context, code: ErrorCode, message: string, headers: Record<string, string> = {}): Response {
  for (const [k, val] of Object.entries(headers)) c.header(k, val);
  return c.json({ error: { code, message } }, errorStatus[code] as 400);
}

export interface AppOptions {
  /** Where unexpected errors are reported (default: one line on stderr, no stack, no message text). */
  logError?: (line: string) => void;
  /** The writer thread that answers writes (reclib serve); absent: every request runs here. */
  writes?: WriteForwarder;
  /**
   * What GET /metrics serves; required when config.metricsToken is set. Built by the caller, so
   * that prom-client is loaded only then (loadMetrics in src/observe/load-metrics.ts).
   */
  metrics?: Metrics;
}

export function createApp(services: Services, options: AppOptions = {}) {
  const { core } = services;
  const logError = options.logError ?? ((line: string) => console.error(line));
  // TrieRouter, which Hono's default SmartRouter ends up with anyway: its first choice, RegExpRouter,
  // cannot take v1's GET /recordings/latest-clip before /recordings/{id} and gives up on the first
  // request, after adding most routes (a few ms of the first answer after a start).
  // test/http/router-choice.test.ts fails when that stops being true.
  const app = new Hono<AppEnv>({ router: new TrieRouter() });
  const deps: HttpDeps = {
    services,
    rateLimiter: new RateLimiter(core.clock, core.config.rateLimit),
    serverOrigin: (c) => new URL(core.config.publicUrl ?? c.req.url).origin,
    ...(options.writes ? { writes: options.writes } : {}),
  };

  // X-Request-Id: ApiRouter routes, plainRoute() handlers and onError call setRequestId (no
  // middleware, see router.ts).
  app.onError((err, c) => {
    setRequestId(c);
    // A directAnswer route (or a forwarded write) keeps the rate limit's headers for its answer;
    // every answer carries them (docs/decisions.md §5), an error too.
    const limit = c.get('answerHeaders');
    const fail = (code: ErrorCode, message: string, headers?: Record<string, string>) => errorResponse(c, code, message, { ...limit, ...headers });
    if (err instanceof AppError) return fail(err.code, err.message, err.headers);
    if (err instanceof HTTPException) {
      const code = (Object.entries(errorStatus).find(([, s]) => s === err.status)?.[0] ?? 'invalid_request') as ErrorCode;
      return fail(code, err.message || code);
    }
    // Unexpected: say nothing about internals in the body or the log (SQL text and stack traces
    // may quote data); the request id ties the report to the client's view.
    const e = err as { name?: string; code?: string };
    const where = (err as Error).stack?.split('\n')[1]?.trim() ?? '';
    logError(`reclib: internal error on ${c.req.method} ${c.req.routePath} request=${c.get('requestId')} ${e.name ?? 'Error'}${e.code ? ` ${e.code}` : ''} ${where}`);
    if (e.code === 'SQLITE_BUSY') return fail('unavailable', 'the database is busy; retry shortly', { 'Retry-After': '1' });
    // A storage failure outside the Writer (which translates its own) is still a 503, not a bug.
    const refused = core.writer.health.refused(err);
    if (refused instanceof AppError) return fail(refused.code, refused.message, refused.headers);
    return fail('internal', `unexpected failure; quote request id ${c.get('requestId')} when reporting it`);
  });

  // A path that exists with other methods says which (PUT where v2 edits with PATCH): still the
  // contract's 404 not_found (§4 has no 405 code), with the methods in the message.
  let templates: Array<{ method: string; path: RegExp }> | undefined;
  const methodsOf = (pathname: string): string[] => {
    templates ??= app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => ({ method: r.method, path: new RegExp(`^${r.path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`) }));
    return [...new Set(templates.filter((t) => t.path.test(pathname)).map((t) => t.method))];
  };
  const noRoute = (c: Context<AppEnv>) => {
    const pathname = new URL(c.req.url).pathname;
    const others = methodsOf(pathname);
    const hint = others.length > 0 ? `; ${pathname} takes ${others.join(', ')}` : '';
    return errorResponse(c, 'not_found', `no route for ${c.req.method} ${pathname}${hint}`);
  };
  app.notFound(plainRoute(noRoute));

  // The node server answers GET /healthz before the app does (src/http/direct-routes.ts), alike.
  app.get(
    '/healthz',
    plainJsonRoute((c) => jsonAnswer(c, healthBody(core))),
  );

  // Prometheus metrics, only when a token is configured (docs/decisions.md §11); the server counts requests.
  const metricsToken = core.config.metricsToken;
  const metrics = metricsToken ? options.metrics : undefined;
  if (metricsToken && !metrics) throw new Error('createApp: config.metricsToken is set, but no metrics were given (loadMetrics)');
  if (metrics && metricsToken) registerMetricsRoute(app, metrics, metricsToken, (c, message) => errorResponse(c, 'unauthenticated', message));

  const v2Doc = new OpenApiDoc(
    { title: 'reclib API', version: '2.0.0', description: 'Recording library: clips and memos, search, devices, keys, events and webhooks.' },
    '/api/v2',
  );
  const v1Doc = new OpenApiDoc(
    { title: 'reclib API (v1 compatibility)', version: '1.0.0', description: 'The earlier interface, kept for existing app clients and integrations.' },
    '/api/v1',
  );
  const v2 = new Hono<AppEnv>();
  const v1 = new Hono<AppEnv>();
  const root = new Hono<AppEnv>();
  registerV2(new ApiRouter(v2, v2Doc, deps), deps);
  registerV1(new ApiRouter(v1, v1Doc, deps), deps);
  registerSessionRoutes(new ApiRouter(root, v2Doc, deps, '/api', [v1Doc]), deps);
  registerMcp(new ApiRouter(app, v2Doc, deps, '/'), deps, logError);

  let v2Json: string | undefined;
  let v1Json: string | undefined;
  app.get('/api/v2/openapi.json', plainRoute((c) => c.body((v2Json ??= JSON.stringify(v2Doc.toJSON())), 200, { 'content-type': 'application/json' })));
  app.get('/api/v1/openapi.json', plainRoute((c) => c.body((v1Json ??= JSON.stringify(v1Doc.toJSON())), 200, { 'content-type': 'application/json' })));
  // Hashed on the first visit, not at every start (and in the writer thread's copy of the app).
  let docsHeaders: Record<string, string> | undefined;
  app.get('/docs', plainRoute((c) => c.body(docsPage, 200, (docsHeaders ??= htmlHeaders(cspWithInlineHashes(docsPage))))));
  registerWebApp(app, noRoute);
  app.route('/api/v2', v2);
  app.route('/api/v1', v1);
  app.route('/api', root);

  return { app, deps, docs: { v1: v1Doc, v2: v2Doc }, metrics };
}
