// One log line and the request metrics per answered request, taken at the Node server (the
// response's 'finish') rather than in a Hono middleware: any middleware sends every request through
// Hono's async compose (see setRequestId in router.ts). The app only leaves two marks on the Node
// response it answers: the route template it matched and the request id it gave.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import type { Logger } from '../observe/log';
import type { Metrics } from '../observe/metrics';

const ROUTE = Symbol('reclib.route');
const REQUEST_ID = Symbol('reclib.requestId');
const STARTED = Symbol('reclib.started');
type Marked = ServerResponse & { [STARTED]?: number; [ROUTE]?: string; [REQUEST_ID]?: string };

/** The label of a request that matched no route (one label, whatever the path: paths hold ids). */
export const UNMATCHED = 'unmatched';

/** The Node response behind c, on the node server (the adapter passes it as env.outgoing). */
const nodeResponse = (c: Context): Marked | undefined => (c.env as { outgoing?: Marked } | undefined)?.outgoing;

/** Records which route template (`/api/v2/recordings/{id}`) answers this request. */
export function markRoute(c: Context, template: string): void {
  const res = nodeResponse(c);
  if (res) res[ROUTE] = template;
}

export function markRequestId(c: Context, id: string): void {
  const res = nodeResponse(c);
  if (res) res[REQUEST_ID] = id;
}

/** markRoute() and markRequestId() of an answer given without Hono (src/http/direct-routes.ts). */
export function markResponse(res: ServerResponse, template: string, id: string): void {
  (res as Marked)[ROUTE] = template;
  (res as Marked)[REQUEST_ID] = id;
}

/** Hono's matched path in the OpenAPI form (`:id` → `{id}`); UNMATCHED when none (notFound). */
export function matchedTemplate(c: Context): string {
  try {
    return c.req.routePath.replace(/:(\w+)/g, '{$1}');
  } catch {
    return UNMATCHED; // Hono's routePath throws when no route matched
  }
}

/** The per-request hook for createNodeServer: logs and counts each answer when it is sent. */
export function observeRequests(logger: Logger, metrics: Metrics | undefined): (req: IncomingMessage, res: ServerResponse) => void {
  // One listener for every answer, which finds what it needs on the response: no closure or
  // once-wrapper per request (~1 µs of a ~75 µs get by id, with graceful-close.ts's the same way).
  function finished(this: Marked): void {
    const ms = performance.now() - (this[STARTED] ?? 0);
    const route = this[ROUTE] ?? UNMATCHED;
    const method = this.req.method ?? 'GET';
    logger.request({ requestId: this[REQUEST_ID] ?? null, method, route, status: this.statusCode, ms });
    metrics?.request(method, route, this.statusCode, ms / 1000);
  }
  return (_req, res) => {
    (res as Marked)[STARTED] = performance.now();
    res.on('finish', finished);
  };
}
