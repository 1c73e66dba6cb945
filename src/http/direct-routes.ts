// Three answers the node server gives before the Hono app sees the request: GET /healthz,
// GET /api/v2/recordings/{id} and POST /api/v2/recordings (a create) when they succeed. On these,
// the app's own path cost more than the work: for a get by id, the adapter's WHATWG Request and
// URL, Hono's routing and context, and an async turn were ~40 of ~200 µs per request (CPU profile
// under autocannon, 32 connections), where a raw node:http + better-sqlite3 server doing the same
// lookup answered 1.8 times as many. A device create is judged against an in-process ceiling
// (issue 14), and the main thread's share of it was ~90 µs, ~15 of them the adapter and Hono.
// And /healthz, the first request a starting server answers, then needs neither the adapter nor
// undici (its WHATWG classes load on first use: ~20% of a start's CPU), which load on first need.
//
// Only successes are answered here, with exactly the bytes the app's route writes (status,
// headers in the same order, body): any other outcome (no or bad credential, no permission, an
// id the route refuses, not found, deleted, another account's, rate limited, a Host the adapter
// refuses; for a create also a body the route refuses or a create the writer refuses) goes to the
// app, as if this file did not exist. Nothing here has an effect the app's path would then
// repeat: authenticating notes a key's use once (the app's second call finds it noted), and a
// refused rate-limit take counts nothing. A create reads its body first (the app then reads the
// same bytes, node-request.ts readNodeBodyEarly), and when the writer refuses it after the take,
// the take is given back and the app answers the writer's error (keepWriteRefusal), without
// running the create again. test/http/direct-routes.test.ts compares the wire bytes of both paths
// for each case.
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { can, type Permission, type Principal } from '../permissions';
import type { RecordingAnswer } from '../services/recording-model';
import { MAX_IDEMPOTENCY_KEY } from '../services/recordings';
import { JSON_TYPE, jsonBody, MAX_JSON_BYTES, tooLarge } from './body';
import type { HttpDeps } from './env';
import { healthBody } from './health';
import { etag } from './if-match';
import { keepWriteRefusal, rawRequestHeader, readNodeBodyEarly } from './node-request';
import { markResponse } from './request-observer';
import { BEARER, parseWith, requestIdFrom } from './router';
import { Id } from './schemas';
import { CreateBody, createdHeaders, written } from './v2/recordings';
import { runWrite } from './write-calls';

/** A request the app would route to GET /api/v2/recordings/{id}, with an id free of escapes. */
const RECORDING_PATH = /^\/api\/v2\/recordings\/([A-Za-z0-9_-]{1,256})$/;
const RECORDING_TEMPLATE = '/api/v2/recordings/{id}';
/** POST: a create (the route's template is its path). */
const CREATE_PATH = '/api/v2/recordings';
const CREATE_TEMPLATE = CREATE_PATH;

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

/** Writes a JSON answer as the app's jsonAnswer() does through the adapter (which adds Content-Length last). */
function answer(res: ServerResponse, body: string, headers: Record<string, string>, status = 200): true {
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}

/** Takes a request answered here, or hands it to the app (`toApp`, the adapter's listener). */
export type DirectRoutes = (req: IncomingMessage, res: ServerResponse, toApp: () => void) => boolean;

/**
 * The direct answers for `deps`'s app: returns true when it answered `req`, or took it (a create:
 * it then answers it, or hands it to `toApp` later); false when the app must. `hostname` is the
 * server's, which the adapter puts in place of a missing Host.
 */
export function directRoutes(deps: HttpDeps, hostname: string): DirectRoutes {
  const { services, rateLimiter } = deps;
  const hosts = new Map<string, boolean>();
  const hostOk = (req: IncomingMessage): boolean => {
    // req.headers, as the adapter reads it (Node builds it before the request event anyway).
    const host = req.headers.host || hostname;
    let ok = hosts.get(host);
    if (ok === undefined) {
      ok = adapterTakesHost(host);
      if (hosts.size >= MAX_HOSTS) hosts.clear();
      hosts.set(host, ok);
    }
    return ok;
  };

  /** Answers as the app's route `template` does (jsonAnswer): its request id, then `headers`. */
  const reply = (req: IncomingMessage, res: ServerResponse, template: string, body: string, headers: Record<string, string> = {}, status = 200): true => {
    const id = requestIdFrom(rawRequestHeader(req, 'x-request-id'));
    markResponse(res, template, id);
    return answer(res, body, { 'content-type': 'application/json', 'x-request-id': id, ...headers }, status);
  };

  const bearer = (req: IncomingMessage): string | undefined => {
    const authorization = rawRequestHeader(req, 'authorization');
    return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  };

  /** The credential cached for `token`, unchecked (AuthService.cached): its caller checks that it is live. */
  const fromCache = (token: string | undefined) => (token === undefined ? undefined : services.auth.cached(token));

  /** The principal of `token` when it holds `permission`; else undefined (the app answers the refusal). */
  const holder = (token: string | undefined, permission: Permission): Principal | undefined => {
    if (token === undefined) return undefined;
    try {
      const principal = services.auth.authenticate(token);
      return can(principal, permission) ? principal : undefined;
    } catch {
      return undefined;
    }
  };

  const health = (req: IncomingMessage, res: ServerResponse): boolean => reply(req, res, '/healthz', JSON.stringify(healthBody(services.core)));

  /**
   * The recording `pathId` as the principal of `token` may read it, or undefined (the app answers
   * the refusal). A credential in the cache is taken as it is, and the lookup itself finds the
   * recording only while that credential is live (AuthService.cached); any miss (also a recording
   * not found or deleted) takes the checked way, whose answer() throws for the app to answer.
   */
  const readable = (token: string | undefined, pathId: string): { principal: Principal; answered: RecordingAnswer } | undefined => {
    const cached = fromCache(token);
    if (cached !== undefined && can(cached.principal, 'recordings:read')) {
      const answered = services.recordings.answerWhileLive(cached.principal, pathId);
      if (answered !== undefined) {
        services.auth.used(cached);
        return { principal: cached.principal, answered };
      }
    }
    const principal = holder(token, 'recordings:read');
    return principal && { principal, answered: services.recordings.answer(principal, pathId) };
  };

  const recording = (req: IncomingMessage, res: ServerResponse, pathId: string): boolean => {
    // The route's params are IdParams, { id: Id }: the id alone is checked here.
    if (!v.is(Id, pathId)) return false;
    let found;
    let limitHeaders;
    try {
      found = readable(bearer(req), pathId);
      if (found === undefined) return false;
      // Last, as it is the one step with an effect; refused (429), it has none. Nothing after it throws.
      limitHeaders = rateLimiter.take(found.principal.credentialId);
    } catch {
      return false;
    }
    return reply(req, res, RECORDING_TEMPLATE, found.answered.body, { ...limitHeaders, etag: etag(found.answered.revision) });
  };

  const create = (req: IncomingMessage, res: ServerResponse, toApp: () => void): boolean => {
    // A body of a stated length within the limit, not chunked, of a JSON type (or none), no
    // Expect; an Idempotency-Key the route takes; a credential that may create.
    const { headers } = req;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= MAX_JSON_BYTES) || headers['transfer-encoding'] !== undefined || headers.expect !== undefined) return false;
    const type = rawRequestHeader(req, 'content-type');
    if (type !== undefined && !JSON_TYPE.test(type)) return false;
    const key = rawRequestHeader(req, 'idempotency-key');
    if (key === undefined || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY) return false;
    // A credential from the cache is taken unchecked: the create's transaction checks that it is
    // still live (RecordingService, creation), and a refusal there goes to the app, which asks.
    const token = bearer(req);
    const cached = fromCache(token);
    const principal = cached === undefined ? holder(token, 'recordings:create') : can(cached.principal, 'recordings:create') ? cached.principal : undefined;
    // Over its rate limit: the app refuses it before it reads the body.
    if (principal === undefined || rateLimiter.full(principal.credentialId)) return false;
    // Counted before its body is read, so that one key's bodies in flight at once are bounded by
    // its budget (counted after, any number of simultaneous 1 MB bodies of one key were read: over
    // 1 GB with 800 connections). Given back for any outcome the app answers instead, which counts
    // the request itself.
    const { headers: limitHeaders, at } = rateLimiter.count(principal.credentialId);
    const giveBack = () => rateLimiter.giveBack(principal.credentialId, at);
    // Taken: from here on, every outcome but a success is the app's, which reads the same bytes
    // (readNodeBodyEarly keeps them, or the error of a body that did not arrive whole).
    const created = readNodeBodyEarly(req, MAX_JSON_BYTES, tooLarge).then(async (bytes) => {
      let input;
      try {
        input = parseWith('body', CreateBody, jsonBody(bytes, type));
      } catch {
        giveBack();
        return undefined;
      }
      try {
        return { limitHeaders, ...(await runWrite(services, deps.writes, 'createRecording', principal, input, key, cached !== undefined)) };
      } catch (e) {
        // Refused (a conflict, a deleted recording, the writer unavailable): the app answers the
        // same error (keepWriteRefusal: its route throws it instead of running the write again),
        // counting the request itself.
        giveBack();
        keepWriteRefusal(req, e);
        return undefined;
      }
    });
    void created.then(
      (done) => {
        if (!done) return toApp();
        const { row, replayed, limitHeaders } = done;
        if (cached !== undefined) services.auth.used(cached);
        reply(req, res, CREATE_TEMPLATE, JSON.stringify(written(principal, row)), { ...limitHeaders, ...createdHeaders(row, replayed) }, replayed ? 200 : 201);
      },
      // The body did not arrive whole: the app answers that, counting the request itself.
      () => {
        giveBack();
        toApp();
      },
    )
      // Not expected (the answer's parts are checked values): the write is done, so not the
      // app's to run again; the client sees the connection close, as for a crash after a commit.
      .catch(() => res.destroy());
    return true;
  };

  return (req, res, toApp) => {
    const url = req.url ?? '';
    if (req.method === 'POST') return url === CREATE_PATH && hostOk(req) && create(req, res, toApp);
    if (req.method !== 'GET') return false;
    if (url === '/healthz') return hostOk(req) && health(req, res);
    const m = url.length > 19 ? RECORDING_PATH.exec(url) : null;
    return m !== null && hostOk(req) && recording(req, res, m[1]!);
  };
}
