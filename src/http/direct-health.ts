// GET /healthz answered by the node server itself, before the Hono app exists: the first request a
// starting server answers (a container's health check, a supervisor waiting for readiness) needs
// only the database's write health, not the app, its routes and schemas, or the adapter and
// undici (src/server.ts loads those a moment after the start, or at the first request that needs
// them). Exactly the bytes the app's route writes (status, headers in the same order, body):
// test/http/direct-routes.test.ts compares the wire bytes of both paths. direct-routes.ts adds the
// other direct answer (GET /api/v2/recordings/{id}) once the app is there.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Core } from '../context';
import { healthBody } from './health';
import { rawRequestHeader } from './node-request';
import { markResponse } from './request-observer';
import { requestIdFrom } from './request-id';

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

/**
 * Whether the adapter would take the request's Host (a request it refuses goes to it, for its
 * error answer). `hostname` is the server's, which the adapter puts in place of a missing Host.
 */
export function hostCheck(hostname: string): (req: IncomingMessage) => boolean {
  const hosts = new Map<string, boolean>();
  return (req) => {
    const host = req.headers.host || hostname;
    let ok = hosts.get(host);
    if (ok === undefined) {
      ok = adapterTakesHost(host);
      if (hosts.size >= MAX_HOSTS) hosts.clear();
      hosts.set(host, ok);
    }
    return ok;
  };
}

/** Writes a 200 JSON answer as the app's jsonAnswer() does through the adapter (which adds Content-Length last). */
export function answerJson(res: ServerResponse, body: string, headers: Record<string, string>): true {
  res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}

/** Answers GET /healthz; any other request (false) is for the app. */
export function directHealth(core: Pick<Core, 'writer'>, hostOk: (req: IncomingMessage) => boolean): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' || req.url !== '/healthz' || !hostOk(req)) return false;
    const id = requestIdFrom(rawRequestHeader(req, 'x-request-id'));
    markResponse(res, '/healthz', id);
    return answerJson(res, JSON.stringify(healthBody(core)), { 'content-type': 'application/json', 'x-request-id': id });
  };
}
