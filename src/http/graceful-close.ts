// Closing the HTTP server without resetting a request it received (docs/decisions.md §1, §11).
//
// Node's server.close() stops accepting and at once destroys every kept-alive connection that is
// idle at that moment. A client that has just sent its next request on such a connection (it
// arrived, but was not parsed yet) then sees a reset, and one whose request is in flight on a
// kept-alive connection gets its answer with "Connection: keep-alive" and may send another on a
// socket that is about to close. So instead:
//  - the listening socket is closed (net.Server's close: no new connections), connections are not;
//  - every answer from then on says "Connection: close", in-flight ones included if their headers
//    have not gone out yet, and Node closes the connection after it: the client opens no new
//    request on it;
//  - a connection with no request in progress is closed once it has been idle for IDLE_CLOSE_MS
//    (a client that sends a request before then is answered, with Connection: close);
//  - after the grace period whatever is left is destroyed (a stuck client cannot hold the stop).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { NumberedTable } from '../numbered-table';

/** Where a response keeps its number in the table of those in flight. */
const ENTRY = Symbol('reclib.inFlight');
type Tracked = ServerResponse & { [ENTRY]?: number };

/** How long a connection with nothing in progress is left open after the stop begins. */
export const IDLE_CLOSE_MS = 1_000;

export interface GracefulClose {
  /** createNodeServer's per-request hook: counts the request, and says Connection: close once closing. */
  observe(req: IncomingMessage, res: ServerResponse): void;
  /** Stops accepting; resolves when every connection has closed, or after graceMs (then destroys the rest). */
  close(graceMs: number): Promise<void>;
  /** How many answers are counted as in progress (tests). */
  inFlight(): number;
}

export function gracefulClose(server: Server, idleCloseMs = IDLE_CLOSE_MS): GracefulClose {
  /** Open connections → requests in progress on each. */
  const connections = new Map<Socket, number>();
  /** The answers not closed yet (not a Set: src/numbered-table.ts says why). */
  const inFlight = new NumberedTable<ServerResponse>();
  let closing = false;

  const closeWhenIdle = (socket: Socket): void => {
    setTimeout(() => {
      if (connections.get(socket) === 0) socket.destroy();
    }, idleCloseMs).unref();
  };

  server.on('connection', (socket: Socket) => {
    connections.set(socket, 0);
    socket.once('close', () => {
      const requests = connections.get(socket);
      connections.delete(socket);
      // An answer queued behind another on this connection (pipelined requests) never emits 'close'
      // when the connection goes first (Node 20 closes only the one holding the socket): forget it
      // here, or the table keeps it, its request and whatever it holds for good.
      if (requests) for (const res of inFlight.values()) if (res.req.socket === socket) inFlight.take((res as Tracked)[ENTRY] ?? -1);
    });
    if (closing) closeWhenIdle(socket); // accepted just before the listener closed
  });

  /** A response's 'close': one function for every response (no closure per request, as request-observer.ts). */
  function closed(this: Tracked): void {
    if (inFlight.take(this[ENTRY] ?? -1) === undefined) return; // counted already
    const socket = this.req.socket;
    const left = (connections.get(socket) ?? 1) - 1;
    if (!connections.has(socket)) return;
    connections.set(socket, left);
    // Answered with keep-alive (its headers went out before the stop began): now idle.
    if (closing && left === 0) closeWhenIdle(socket);
  }

  return {
    observe(req, res) {
      const socket = req.socket;
      connections.set(socket, (connections.get(socket) ?? 0) + 1);
      (res as Tracked)[ENTRY] = inFlight.add(res);
      if (closing) res.shouldKeepAlive = false;
      res.on('close', closed);
    },

    close(graceMs) {
      closing = true;
      // Headers not sent yet: the answer will say Connection: close and Node ends the connection after it.
      for (const res of inFlight.values()) if (!res.headersSent) res.shouldKeepAlive = false;
      const closed = new Promise<void>((resolve) => {
        // net.Server's close, not http.Server's: that one would destroy idle keep-alive connections now.
        NetServer.prototype.close.call(server, () => resolve());
      });
      for (const [socket, requests] of connections) if (requests === 0) closeWhenIdle(socket);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          for (const socket of connections.keys()) socket.destroy();
          resolve();
        }, graceMs);
      });
      return Promise.race([closed, deadline]).finally(() => clearTimeout(timer));
    },

    inFlight: () => inFlight.size,
  };
}
