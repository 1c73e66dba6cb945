// ApiRouter: the one way to add an API operation. It authenticates, applies the rate limit,
// checks the permission, validates path, query and body with valibot (failures become
// 400 invalid_request naming the field), and records the operation in the OpenAPI document.
import type { Context, Handler, Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import * as v from 'valibot';
import { AppError, invalid } from '../errors';
import { newId } from '../ids';
import type { Permission, Principal } from '../permissions';
import { can } from '../permissions';
import { jsonBody, readBodyBytes, readJsonBody } from './body';
import { forwardWrite, WriterUnavailable } from './forward-write';
import { requestHeader } from './node-request';
import { arrayInPlaceOfObject } from './object-arrays';
import { markRequestId, markRoute, matchedTemplate } from './request-observer';
import type { AppEnv, HttpDeps, WriteForwarder } from './env';
import type { OpenApiDoc, OperationDoc } from './openapi';

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

/**
 * Who may call: a permission; any signed-in session; 'credential' = any valid key or session, the
 * operation checking permissions itself (the MCP endpoint, whose tools each need their own); or anyone.
 */
export type Access = { permission: Permission } | 'session' | 'credential' | 'public';

export interface RouteSpec<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style path relative to the router's prefix: /recordings/{id} */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  access: Access;
  params?: P;
  query?: Q;
  body?: B;
  /** Whether the body may be omitted (e.g. DELETE with an optional body). */
  bodyOptional?: boolean;
  headers?: OperationDoc['headers'];
  responses: OperationDoc['responses'];
  /**
   * The handler answers with jsonAnswer() (which carries X-Request-Id itself), so the router need
   * not put the header on the context first. For the hot read routes; see jsonAnswer().
   */
  directAnswer?: true;
  /**
   * A write whose handler hands only its service call to the writer thread (HttpDeps.writes.call,
   * write-calls.ts) and parses, checks and answers here: the router does not forward the request.
   */
  writerCall?: true;
  /**
   * For a write the router forwards to the writer thread, whose app has no rate limit: the budget
   * the handler counts the request against in process (a sign-in's attempt against its account),
   * named here from the parsed body so that the main thread counts it before the hand-over.
   */
  forwardedBudget?: (body: Out<B>) => string;
  /** A route other than GET that writes nothing (a 405 answer): answered here, never forwarded. */
  writesNothing?: true;
  /**
   * A JSON array body is a batch (JSON-RPC, MCP): it counts against the credential's rate limit as
   * the elements it holds, as if each were sent alone, on the main thread before a hand-over. One
   * the limit has no room for is refused whole, costing the one request of its POST
   * (RateLimiter.countMore).
   */
  batch?: true;
  /**
   * Not counted against the credential's rate limit: signing out, which must work for a session
   * that spent its minute, and can cost the server only once (the session is gone after it).
   */
  uncounted?: true;
}

/** The first byte of a JSON text that is not white space ('{' for one object); 0 for none. */
function firstByte(bytes: Uint8Array): number {
  for (const b of bytes) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b;
  return 0;
}

/** A rate-limit budget a request was counted against, and the time it was (RateLimiter.count). */
interface Counted {
  budget: string;
  at: number | undefined;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
}

/** "body.audio[0].fileId: Invalid length" — the first issue, with where it is. */
export function issueMessage(where: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return `${where} is invalid`;
  let path = where;
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key;
    path += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  if (issue.kind === 'schema' && issue.type === 'strict_object' && issue.input !== undefined && issue.expected === 'never') {
    return `${path}: unknown field`;
  }
  // valibot words a missing key as 'Invalid key: Expected "name" but received undefined'.
  if (issue.kind === 'schema' && issue.type.endsWith('object') && issue.input === undefined && issue.expected?.startsWith('"')) {
    return `${path}: required field is missing`;
  }
  // And a wrong type as 'Invalid type: Expected string but received null': said as our messages are.
  const wanted = issue.kind === 'schema' && issue.message.startsWith('Invalid type:') ? TYPE_WORDS[issue.expected ?? ''] : undefined;
  if (wanted) return `${path}: must be ${wanted}, not ${shortened(issue.received)}`;
  return `${path}: ${issue.message}`;
}

/**
 * What was received, by its kind (valibot words it "yes", 5, null, Object): never the value
 * itself, which may be long or a secret (a password sent as a number).
 */
const shortened = (received: string): string =>
  received.startsWith('"') ? 'a string' : /^-?(\d|Infinity|NaN)/.test(received) ? 'a number' : (TYPE_WORDS[received] ?? received);

/** valibot's names of the types a value should have had, as a message says them. */
const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  Object: 'an object',
  Array: 'an array',
};

export function parseWith<S extends Schema>(where: string, schema: S, input: unknown): v.InferOutput<S> {
  const array = arrayInPlaceOfObject(where, schema, input);
  if (array) throw invalid(`${array}: must be an object, not an array`);
  const r = v.safeParse(schema, input);
  if (!r.success) throw invalid(issueMessage(where, r.issues));
  return r.output;
}

const queryName = (name: string) => (/^[\w.-]{1,64}$/.test(name) ? name : JSON.stringify(name.slice(0, 64)));

/**
 * The query as one string per parameter, parsed once from the URL. A parameter given twice would
 * leave the caller guessing which value counted, and an undeclared one is usually a typo (`curser`)
 * that would silently change the result: both are 400s naming the parameter. Names and values are
 * decoded as Hono does ("+" is a space), except that a value whose percent-escapes are not UTF-8
 * (`q=%FF`, `q=%zz`) is a 400 too: Hono keeps it as raw text, so the search would run for "ff".
 */
export function singleQuery(c: Context, schema: Schema): Record<string, string> {
  const declared = (schema as { entries?: Record<string, unknown> }).entries;
  const url = c.req.url;
  const start = url.indexOf('?');
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  if (start < 0) return query;
  const hash = url.indexOf('#', start);
  const given = new Map<string, string[]>();
  for (const pair of url.slice(start + 1, hash < 0 ? undefined : hash).split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    // A name that does not decode is kept as sent (it is then an unknown parameter).
    const name = decodeQueryPart(rawName) ?? rawName;
    if (name === '') continue;
    const values = given.get(name);
    if (values) values.push(eq < 0 ? '' : pair.slice(eq + 1));
    else given.set(name, [eq < 0 ? '' : pair.slice(eq + 1)]);
  }
  for (const [name, [raw = '', ...more]] of given) {
    if (declared && !Object.hasOwn(declared, name)) {
      const known = Object.keys(declared);
      throw invalid(`query.${queryName(name)}: unknown parameter; this operation takes ${known.length ? known.join(', ') : 'none'}`);
    }
    if (more.length > 0) throw invalid(`query.${queryName(name)}: given ${more.length + 1} times; send it once`);
    const value = decodeQueryPart(raw);
    if (value === undefined) {
      throw invalid(`query.${queryName(name)}: holds a malformed percent-escape (%FF or %zz are not UTF-8 text); percent-encode the UTF-8 bytes of the value`);
    }
    query[name] = value;
  }
  return query;
}

/** A query name or value decoded ("+" is a space); undefined when its percent-escapes are not UTF-8. */
function decodeQueryPart(part: string): string | undefined {
  const text = part.includes('+') ? part.replace(/\+/g, ' ') : part;
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives the request its id (an incoming X-Request-Id matching docs/decisions.md §4's pattern is kept, else
 * a new one) and the X-Request-Id response header; idempotent. Every route and the app's notFound
 * and onError call it, instead of an app.use('*') middleware: with any middleware Hono runs every
 * request through its async compose (measured ~9 µs of a ~60 µs get-by-id), while a route with a
 * single handler is answered synchronously.
 */
export function setRequestId(c: Context<AppEnv>): string {
  const id = requestId(c);
  c.header('X-Request-Id', id);
  return id;
}

/** The id of a request that sent `incoming` as its X-Request-Id: that one when it is well-formed, else a new one. */
export const requestIdFrom = (incoming: string | undefined): string => (incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newId('req'));

/** The request's id (assigned on first use, as setRequestId does), without touching the response headers. */
export function requestId(c: Context<AppEnv>): string {
  let id = c.get('requestId');
  if (id === undefined) {
    id = requestIdFrom(requestHeader(c, 'x-request-id'));
    c.set('requestId', id);
    markRequestId(c, id);
  }
  return id;
}

/**
 * A JSON answer whose headers are a plain object, X-Request-Id included. Hono's c.header(), and
 * c.json() given more than one header, build a WHATWG Headers object, which the node adapter then
 * converts back (~2 µs of a ~65 µs get-by-id); a Response with plain headers is written by
 * @hono/node-server straight from its cache. Only for routes declared with `directAnswer`: headers
 * set with c.header() do not reach this Response, so the router hands over the rate limit's
 * RateLimit-* headers through the context (answerHeaders) instead.
 */
export function jsonAnswer(c: Context<AppEnv>, body: unknown, headers?: Record<string, string>, status = 200): Response {
  return jsonTextAnswer(c, JSON.stringify(body), headers, status);
}

/** jsonAnswer() of a body already in JSON text (such as RECORDING_ANSWER_SQL's). */
export function jsonTextAnswer(c: Context<AppEnv>, text: string, headers?: Record<string, string>, status = 200): Response {
  return new Response(text, {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId(c), ...c.get('answerHeaders'), ...headers },
  });
}

/** A handler outside ApiRouter (health, OpenAPI, docs, not found) that answers with X-Request-Id too. */
export const plainRoute =
  (handler: (c: Context<AppEnv>) => Response) =>
  (c: Context<AppEnv>): Response => {
    setRequestId(c);
    markRoute(c, matchedTemplate(c));
    return handler(c);
  };

/**
 * plainRoute for a handler that answers with jsonAnswer(), which carries X-Request-Id itself, so
 * no WHATWG Headers object is built (see jsonAnswer). For /healthz: probes call it often, and it
 * is the first request a starting server answers, when building the first Headers object (undici's
 * class compiled on first use) was ~11 ms of a CPU profile of the start on a loaded machine.
 */
export const plainJsonRoute =
  (handler: (c: Context<AppEnv>) => Response) =>
  (c: Context<AppEnv>): Response => {
    markRoute(c, matchedTemplate(c));
    return handler(c);
  };

/** Hono hands only Error instances to onError; anything else thrown becomes one here. */
const asError = (e: unknown): Error => (e instanceof Error ? e : new Error('a non-Error value was thrown'));

function parseBody(schema: Schema, raw: unknown, optional: boolean | undefined): unknown {
  if (raw === undefined && !optional) throw invalid('request body is required (JSON)');
  return raw === undefined ? undefined : parseWith('body', schema, raw);
}

/** An Authorization header's form; the token is the first group. */
export const BEARER = /^Bearer[ ]+(\S{1,512})\s*$/i;

/** Finds and checks the caller's credential: a bearer token, else the session cookie (`access`: the route's, for the message when there is none). */
export function authenticate(c: Context<AppEnv>, deps: HttpDeps, access?: Access): Principal {
  const header = requestHeader(c, 'authorization');
  if (header !== undefined) {
    const m = BEARER.exec(header);
    if (!m?.[1]) throw new AppError('unauthenticated', 'Authorization must be "Bearer <API key or session token>"');
    return deps.services.auth.authenticate(m[1]);
  }
  const cookie = getCookie(c, 'reclib_session');
  if (cookie) {
    if (UNSAFE.has(c.req.method)) {
      // The configured public origin, or the origin this request reached (its Host): a cross-site
      // page cannot make the browser send our cookie with an Origin equal to our own Host.
      const origin = c.req.header('origin');
      if (!origin || (origin !== deps.serverOrigin(c) && origin !== new URL(c.req.url).origin)) {
        throw new AppError('forbidden', 'a cookie-authenticated write must carry an Origin header equal to the server origin');
      }
    }
    if (!cookie.startsWith('rls_')) throw new AppError('unauthenticated', 'session cookie is not valid');
    return deps.services.auth.authenticate(cookie);
  }
  throw new AppError(
    'unauthenticated',
    access === 'session'
      ? 'a signed-in session is required: send Authorization: Bearer <session token> (rls_…, from POST /api/session or reclib sessions create) or the reclib_session cookie; API keys are refused here'
      : 'credentials required: send Authorization: Bearer <API key or session token>',
  );
}

export class ApiRouter {
  constructor(
    readonly hono: Hono<AppEnv>,
    readonly doc: OpenApiDoc,
    private readonly deps: HttpDeps,
    /** Set when this router's paths live outside the document's server prefix. */
    private readonly serverUrl?: string,
    /** Further documents that describe these operations too (the /api/session routes are in v1's and v2's). */
    private readonly alsoDocumentedIn: readonly OpenApiDoc[] = [],
  ) {}

  add<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined>(
    spec: RouteSpec<P, Q, B>,
    handler: (c: Context<AppEnv>, input: RouteInput<Out<P>, Out<Q>, Out<B>>) => Response | Promise<Response>,
  ): void {
    const op: OperationDoc = {
      method: spec.method,
      path: spec.path,
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.access === 'public' ? 'none' : spec.access === 'session' ? 'session' : 'bearer',
      ...(typeof spec.access === 'object' ? { permission: spec.access.permission } : {}),
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.query ? { query: spec.query } : {}),
      ...(spec.body ? { body: spec.body } : {}),
      ...(spec.headers ? { headers: spec.headers } : {}),
      responses: spec.responses,
      ...(this.serverUrl ? { serverUrl: this.serverUrl } : {}),
    };
    for (const doc of [this.doc, ...this.alsoDocumentedIn]) doc.add(op);
    const honoPath = spec.path.replace(/\{(\w+)\}/g, ':$1');
    // The label of this route in the request log and metrics: the template, never the path.
    // (A router at the root, serverUrl '/', must not make it //mcp.)
    const template = (this.serverUrl ?? this.doc.serverPath).replace(/\/$/, '') + spec.path;
    const deps = this.deps;
    // Every operation but a GET may write (an MCP POST too: create_note), so the writer thread
    // answers it when the server runs one (forward-write.ts).
    const writes = spec.method !== 'get' && !spec.writerCall && !spec.writesNothing ? deps.writes : undefined;
    /**
     * Hands an admitted write to the writer thread. What the route checks before it reads a body
     * (its path and query) is checked first, and a route without a body reads none, so the answers
     * are those of one process: an id the route refuses is a 400 whatever the body, and a DELETE
     * is not refused for a body it ignores (nor kept waiting for one that never comes).
     */
    const forward = async (c: Context<AppEnv>, writer: WriteForwarder, counted: Counted[], principal: Principal | undefined): Promise<Response> => {
      if (spec.params) parseWith('path', spec.params, c.req.param());
      if (spec.query) parseWith('query', spec.query, singleQuery(c, spec.query));
      const id = requestId(c);
      const bytes = spec.body ? await readBodyBytes(c) : undefined;
      // Parsed here only when something is read from it: a sign-in's account, a batch's size (a
      // body that is not an array is one request, and is not parsed twice).
      const body = () => parseBody(spec.body!, jsonBody(bytes, requestHeader(c, 'content-type')), spec.bodyOptional) as Out<B>;
      // Anything but one object is parsed here (a batch may follow a byte order mark).
      if (spec.batch && principal && bytes && firstByte(bytes) !== 0x7b) {
        const parsed = body();
        if (Array.isArray(parsed)) countBatch(c, principal, parsed.length, counted);
      }
      if (spec.body && spec.forwardedBudget) {
        const budget = spec.forwardedBudget(body());
        const { headers, at } = deps.rateLimiter.count(budget);
        c.set('answerHeaders', headers);
        counted.push({ budget, at });
      }
      return forwardWrite(c, writer, id, bytes);
    };
    /**
     * A batch of `n` counted against the caller's credential, one of them at admission already.
     * Refused whole, it keeps the admission's count, as the POST it was: the body was read and
     * parsed for it, so refusals cannot loop for free. `counted`: a write's record, for a later
     * give-back.
     */
    const countBatch = (c: Context<AppEnv>, principal: Principal, n: number, counted: Counted[] | undefined): void => {
      if (n <= 1) return;
      const id = principal.credentialId;
      const t = deps.rateLimiter.countMore(id, n - 1);
      for (let i = 1; i < n; i++) counted?.push({ budget: id, at: t.at });
      if (!t.headers) return;
      if (spec.directAnswer || writes) c.set('answerHeaders', t.headers);
      else for (const [name, value] of Object.entries(t.headers)) c.header(name, value);
    };
    // Only a write can be refused because the writer thread is away (below): a read keeps no record
    // of what it was counted against.
    const refusable = writes !== undefined || spec.writerCall === true;
    // A write refused because the writer thread is restarting (or the server stopping) was not
    // served: it counts against nothing, so a client that retries after its Retry-After: 1 is not
    // locked out for the rest of the minute.
    const uncountIfUnavailable =
      (counted: Counted[]) =>
      (e: unknown): never => {
        if (e instanceof WriterUnavailable) for (const { budget, at } of counted) deps.rateLimiter.giveBack(budget, at);
        throw e;
      };
    const admitAndRun = (c: Context<AppEnv>): Response | Promise<Response> => {
      let principal: Principal | undefined;
      /** The rate-limit budgets a write was counted against, and when (none kept for a read). */
      const counted: Counted[] | undefined = refusable ? [] : undefined;
      if (spec.access !== 'public') {
        principal = authenticate(c, deps, spec.access);
        let headers: Record<string, string> | undefined;
        if (spec.uncounted) {
          // nothing counted, no RateLimit headers
        } else if (counted) {
          const taken = deps.rateLimiter.count(principal.credentialId);
          headers = taken.headers;
          counted.push({ budget: principal.credentialId, at: taken.at });
        } else headers = deps.rateLimiter.take(principal.credentialId);
        if (spec.directAnswer || writes) c.set('answerHeaders', headers);
        else if (headers) for (const [name, value] of Object.entries(headers)) c.header(name, value);
        c.set('principal', principal);
        if (spec.access === 'session') {
          if (principal.kind !== 'session') {
            throw new AppError('session_required', 'this operation needs a signed-in session (rls_… token or cookie); API keys are refused');
          }
        } else if (typeof spec.access === 'object' && !can(principal, spec.access.permission)) {
          throw new AppError('forbidden', `this credential lacks the ${spec.access.permission} permission`);
        }
      }
      // Admitted: the writer thread does the rest (and the checks above again, but for the rate limit).
      if (writes && counted) return forward(c, writes, counted, principal).catch(uncountIfUnavailable(counted));
      const params = spec.params ? parseWith('path', spec.params, c.req.param()) : undefined;
      const query = spec.query ? parseWith('query', spec.query, singleQuery(c, spec.query)) : undefined;
      const run = (body: unknown) => handler(c, { params, query, body, principal: principal as Principal } as RouteInput<Out<P>, Out<Q>, Out<B>>);
      const bodySchema = spec.body;
      const result = bodySchema
        ? readJsonBody(c).then((raw) => {
            const body = parseBody(bodySchema, raw, spec.bodyOptional);
            if (spec.batch && principal && Array.isArray(body)) countBatch(c, principal, body.length, counted);
            return run(body);
          })
        : run(undefined);
      // A create's service call (writerCall) may be refused so too.
      return counted && result instanceof Promise ? result.catch(uncountIfUnavailable(counted)) : result;
    };
    // A route without a body is answered synchronously (see setRequestId for why that matters).
    // One with a body starts after the current parse step, as an async handler always did: a
    // framing error in the body (bad chunk, bad length) is then answered by Node's parser (400)
    // before any 401/403 of ours.
    const assignId = spec.directAnswer ? requestId : setRequestId;
    const route: Handler<AppEnv> = spec.body
      ? (c) => {
          markRoute(c, template);
          assignId(c);
          return Promise.resolve(c)
            .then(admitAndRun)
            .catch((e: unknown) => Promise.reject(asError(e)));
        }
      : (c) => {
          markRoute(c, template);
          assignId(c);
          try {
            const result = admitAndRun(c);
            return result instanceof Promise ? result.catch((e: unknown) => Promise.reject(asError(e))) : result;
          } catch (e) {
            throw asError(e);
          }
        };
    this.hono.on(spec.method.toUpperCase(), honoPath, route);
  }
}
