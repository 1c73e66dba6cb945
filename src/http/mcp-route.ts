// POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (docs/decisions.md §9). Each request
// gets its own SDK server and transport for the caller ApiRouter authenticated and rate-limited,
// so one key's tools never see another's principal and nothing is kept between requests. JSON
// answers, not SSE: a stateless tool call has one reply, and a JSON body is one write.
// GET and DELETE answer 405: a stateless server has no stream to open and no session to end,
// which is how the MCP specification says to decline them (the SDK client then carries on).
import type { Context } from 'hono';
import * as v from 'valibot';
import { AppError } from '../errors';
import type { AppEnv, HttpDeps } from './env';
import { requestHeader } from './node-request';
import { requestId, type ApiRouter } from './router';

/**
 * The SDK, loaded on the first MCP request: building its zod schemas at import took 350-500 ms
 * here (measured on the bundle), which every CLI command and every server start would pay.
 */
let sdk: Promise<readonly [typeof import('../mcp/sdk'), typeof import('../mcp/tool-server')]> | undefined;
/**
 * The SDK first, then the module that imports it: in the bundle the SDK is a program of its own
 * (build.mjs, LAZY_PROGRAMS), and a module whose import of it failed would stay half-loaded. A
 * failed load (the program's file unreadable for a moment) is forgotten, so the next request tries
 * again instead of every MCP request failing until a restart.
 */
const loadSdk = () =>
  (sdk ??= import('../mcp/sdk')
    .then(async (loaded) => [loaded, await import('../mcp/tool-server')] as const)
    .catch((e: unknown) => {
      sdk = undefined;
      throw e;
    }));

const Message = v.looseObject({
  jsonrpc: v.pipe(v.literal('2.0', 'must be "2.0"'), v.description('JSON-RPC version')),
  id: v.optional(v.union([v.string(), v.number()])),
  method: v.optional(v.pipe(v.string(), v.description('initialize, tools/list, tools/call, notifications/initialized, ping, …'))),
  params: v.optional(v.record(v.string(), v.unknown())),
});

/** Messages in one batch: each is a tool call the server runs before it answers any. */
const MAX_BATCH = 50;

const McpBody = v.pipe(
  v.union(
    [Message, v.pipe(v.array(Message), v.maxLength(MAX_BATCH, `a batch may hold at most ${MAX_BATCH} messages; send more in several POSTs`))],
    `must be a JSON-RPC 2.0 message object (or an array of at most ${MAX_BATCH} of them)`,
  ),
  v.description('A JSON-RPC 2.0 message of the Model Context Protocol'),
);

const TOOLS_DOC =
  'Tools: search_recordings { query, type?, from?, to?, limit?, cursor? } and list_recordings { type?, limit?, cursor? } ' +
  '(recordings:read) → { recordings: [{ id, type, title, recordedAt, snippet }], nextCursor }; get_recording { id } ' +
  '(recordings:read) → { recording }; create_note { text, title?, type? } (recordings:create, an import: capture rules ' +
  'do not fire) → { recording }. A missing permission or an unknown id is a tool result with isError: true.';

/** The transport's own refusals (Accept, JSON-RPC shape) in the error envelope, as every bad input (docs/decisions.md §4). */
async function inEnvelope(res: Response): Promise<never> {
  const text = await res.text();
  let message = `the MCP transport refused the request (HTTP ${res.status})`;
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string' && m !== '') message = m;
  } catch {
    // not JSON: keep the generic message
  }
  throw new AppError('invalid_request', `${message} (MCP Streamable HTTP: POST a JSON-RPC message with Accept: application/json, text/event-stream)`);
}

/**
 * What is wrong with a request's params that the SDK would answer with its schema's raw dump as an
 * internal error (-32603): said here as the invalid params (-32602) they are, in words.
 */
function paramsProblem(m: v.InferOutput<typeof Message>): string | undefined {
  if (m.id === undefined) return undefined;
  const p = m.params;
  if (m.method === 'tools/call') {
    if (p === undefined) return 'params is required: { name, arguments? }';
    if (typeof p.name !== 'string') return 'params.name must be the name of a tool (a string)';
    const args = p.arguments;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return "params.arguments must be an object of the tool's arguments";
  }
  if (m.method === 'initialize' && p === undefined) return 'params is required: { protocolVersion, capabilities, clientInfo }';
  return undefined;
}

/** What GET and DELETE answer: a JSON-RPC error, not the error envelope. */
const DeclinedBody = v.object({ jsonrpc: v.literal('2.0'), error: v.object({ code: v.pipe(v.number(), v.integer()), message: v.string() }), id: v.null() });

const declined = (c: Context<AppEnv>) =>
  c.json(
    { jsonrpc: '2.0', error: { code: -32000, message: `${c.req.method} is not offered: this MCP endpoint is stateless; POST each JSON-RPC message` }, id: null },
    405,
    { Allow: 'POST' },
  );

export function registerMcp(r: ApiRouter, deps: HttpDeps, logError: (line: string) => void): void {
  r.add(
    {
      method: 'post', path: '/mcp', operationId: 'mcp', tag: 'mcp', access: 'credential',
      summary: 'Model Context Protocol (Streamable HTTP, stateless) for assistants: search, list, read recordings and save notes',
      body: McpBody,
      headers: [{ name: 'Accept', required: true, description: 'application/json, text/event-stream (as MCP clients send it)' }],
      responses: {
        200: { description: `The JSON-RPC response. ${TOOLS_DOC}` },
        202: { description: 'Accepted: the message was a notification or a response' },
        400: { description: 'Not a JSON-RPC message, or an Accept header without application/json and text/event-stream' },
        401: { description: 'No or invalid credentials' },
        429: { description: 'The credential\'s rate limit (each POST counts, a batch as the messages it holds)' },
      },
      directAnswer: true,
      // A batch counts as the messages it holds, as if each were POSTed alone.
      batch: true,
    },
    async (c, { body, principal }) => {
      const [{ WebStandardStreamableHTTPServerTransport, SUPPORTED_PROTOCOL_VERSIONS, JSONRPCRequestSchema }, { toolServer, BATCH_RESULT_CHARS }] = await loadSdk();
      // One message whose params the SDK cannot use, in a request the transport would otherwise
      // take (its Accept, media type and protocol version): answered here. In a batch the SDK's
      // own answers stand.
      // The SDK matches its answers to a batch's requests by id: two requests with one id would
      // both run and one answer be lost (a note saved, its answer never seen).
      if (Array.isArray(body)) {
        const ids = body.filter((m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m).map((m) => JSON.stringify((m as { id: unknown }).id));
        const twice = ids.find((id, i) => ids.indexOf(id) !== i);
        if (twice !== undefined) throw new AppError('invalid_request', `this batch holds two requests with the id ${twice}: each request needs an id of its own (JSON-RPC)`);
      }
      const problem = Array.isArray(body) ? undefined : paramsProblem(body);
      if (problem && !Array.isArray(body)) {
        const accept = requestHeader(c, 'accept') ?? '';
        const media = (requestHeader(c, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
        const version = requestHeader(c, 'mcp-protocol-version');
        const taken = accept.includes('application/json') && accept.includes('text/event-stream') && media === 'application/json' && JSONRPCRequestSchema.safeParse(body).success;
        if (taken && (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version))) {
          const headers = { 'x-request-id': requestId(c), ...(c.get('answerHeaders') ?? {}) };
          return c.json({ jsonrpc: '2.0', id: body.id ?? null, error: { code: -32602, message: `Invalid params: ${problem}` } }, 200, headers);
        }
      }
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const batchBudget = Array.isArray(body) && body.length > 1 ? { left: BATCH_RESULT_CHARS } : undefined;
      const server = toolServer({ services: deps.services, principal, requestId: requestId(c), logError, batchBudget });
      try {
        await server.connect(transport);
        const res = await transport.handleRequest(c.req.raw, { parsedBody: body });
        if (res.status >= 400 && res.status < 500) return await inEnvelope(res);
        // A new Response rather than res.headers.set(): @hono/node-server's lightweight Response
        // (global once the server module is loaded) may be answered from its cached init headers.
        const headers = new Headers(res.headers);
        headers.set('x-request-id', requestId(c));
        for (const [name, value] of Object.entries(c.get('answerHeaders') ?? {})) headers.set(name, value);
        return new Response(res.body, { status: res.status, headers });
      } finally {
        await server.close();
      }
    },
  );
  for (const method of ['get', 'delete'] as const) {
    r.add(
      {
        method, path: '/mcp', operationId: `mcp${method === 'get' ? 'Get' : 'Delete'}`, tag: 'mcp', access: 'public',
        summary: `Declined with 405 (Allow: POST): this MCP endpoint is stateless, so it has ${method === 'get' ? 'no server-initiated stream' : 'no session to end'}`,
        responses: { 405: { description: 'Method not allowed (a JSON-RPC error body, as MCP clients expect)', schema: DeclinedBody, headers: ['Allow'] } },
        writesNothing: true,
      },
      (c) => declined(c),
    );
  }
}
