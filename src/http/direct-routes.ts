// Two answers the node server gives before the Hono app sees the request: GET /healthz, and
// GET /api/v2/recordings/{id} when it succeeds. On both, the app's own path cost more than the
// work: for a get by id, the adapter's WHATWG Request and URL, Hono's routing and context, and
// an async turn were ~40 of ~200 µs per request (CPU profile under autocannon, 32 connections),
// where a raw node:http + better-sqlite3 server doing the same lookup answered 1.8 times as many.
// And /healthz, the first request a starting server answers, then needs neither the adapter nor
// undici (its WHATWG classes load on first use: ~20% of a start's CPU), which load on first need.
//
// Only successes are answered here, with exactly the bytes the app's route writes (status,
// headers in the same order, body): any other outcome (no or bad credential, no permission, an
// id the route refuses, not found, deleted, another account's, rate limited, a Host the adapter
// refuses) goes to the app, as if this file did not exist. Nothing here has an effect the app's
// path would then repeat: authenticating notes a key's use once (the app's second call finds it
// noted), and a refused rate-limit take counts nothing. test/http/direct-routes.test.ts compares
// the wire bytes of both paths for each case.
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { can } from '../permissions';
import type { HttpDeps } from './env';
import { healthBody } from './health';
import { etag } from './if-match';
import { rawRequestHeader } from './node-request';
import { markResponse } from './request-observer';
import { BEARER, requestIdFrom } from './router';
import { Id } from './schemas';

/** A request the app would route to GET /api/v2/recordings/{id}, with an id free of escapes. */
const RECORDING_PATH = /^\/api\/v2\/recordings\/([A-Za-z0-9_-]{1,256})$/;
const RECORDING_TEMPLATE = '/api/v2/recordings/{id}';

/** Host values seen, whether the adapter takes them (checked as it does, once per value). */
const MAX_HOSTS = 64;

/**
 * The adapter's (@hono/node-server, newRequest) check of the Host header, for a path of plain
 * characters: the URL it builds must parse, and its hostname must be the Host without its port.
 */
function adapterTakesHost(host: string): boolean {
  try {
    const url = new URL(`http://${host}/`);
    return url.hostname.length === host.length || url.hostname === host.replace(/:\d+$/, '');
  } catch {
    return false;
  }
}

/** Writes a 200 JSON answer as the app's jsonAnswer() does through the adapter (which adds Content-Length last). */
function answer(res: ServerResponse, body: string, headers: Record<string, string>): true {
  res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}

/**
 * The direct answers for `deps`'s app: returns true when it answered `req`, false when the app
 * must. `hostname` is the server's, which the adapter puts in place of a missing Host.
 */
export function directRoutes(deps: HttpDeps, hostname: string): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { services, rateLimiter } = deps;
  const hosts = new Map<string, boolean>();
  const hostOk = (req: IncomingMessage): boolean => {
    const host = req.headers.host || hostname;
    let ok = hosts.get(host);
    if (ok === undefined) {
      ok = adapterTakesHost(host);
      if (hosts.size >= MAX_HOSTS) hosts.clear();
      hosts.set(host, ok);
    }
    return ok;
  };

  const health = (req: IncomingMessage, res: ServerResponse): boolean => {
    const id = requestIdFrom(rawRequestHeader(req, 'x-request-id'));
    markResponse(res, '/healthz', id);
    return answer(res, JSON.stringify(healthBody(services.core)), { 'content-type': 'application/json', 'x-request-id': id });
  };

  const recording = (req: IncomingMessage, res: ServerResponse, pathId: string): boolean => {
    const authorization = rawRequestHeader(req, 'authorization');
    const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (token === undefined) return false;
    let answered;
    let limitHeaders;
    try {
      const principal = services.auth.authenticate(token);
      // The route's params are IdParams, { id: Id }: the id alone is checked here.
      if (!can(principal, 'recordings:read') || !v.is(Id, pathId)) return false;
      answered = services.recordings.answer(principal, pathId);
      // Last, as it is the one step with an effect; refused (429), it has none. Nothing after it throws.
      limitHeaders = rateLimiter.take(principal.credentialId);
    } catch {
      return false;
    }
    const id = requestIdFrom(rawRequestHeader(req, 'x-request-id'));
    markResponse(res, RECORDING_TEMPLATE, id);
    return answer(res, answered.body, { 'content-type': 'application/json', 'x-request-id': id, ...limitHeaders, etag: etag(answered.revision) });
  };

  return (req, res) => {
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    if (url === '/healthz') return hostOk(req) && health(req, res);
    const m = url.length > 19 ? RECORDING_PATH.exec(url) : null;
    return m !== null && hostOk(req) && recording(req, res, m[1]!);
  };
}
