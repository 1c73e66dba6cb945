// v2 GET /events/stream: the account's feed live, as Server-Sent Events (docs/decisions.md §10). The
// streaming itself (fan-out, backpressure, pings, limits) is services/event-stream.ts.
import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { invalid } from '../../errors';
import { MAX_STREAMS_PER_CREDENTIAL, PING_MS } from '../../services/event-stream';
import type { EventService } from '../../services/events';
import type { HttpDeps } from '../env';
import { requestHeader } from '../node-request';
import { authenticate, type ApiRouter } from '../router';
import { queryInt } from '../schemas';

const EVENT_ID = /^\d{1,16}$/;

const Query = v.strictObject({
  after: v.optional(
    v.pipe(
      queryInt(0, Number.MAX_SAFE_INTEGER),
      v.description('Start after this event id (0: from the first event). Last-Event-ID wins when both are sent. Without either: only new events'),
    ),
  ),
});

const StreamSchema = v.pipe(
  v.string(),
  v.description(
    'One message per feed event: "id: <event id>", "event: <type>", "data: <the feed item JSON as GET /events returns it>", then a blank line; ' +
      `a ": ping" comment every ${PING_MS / 1000} s`,
  ),
);

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  // Proxies such as nginx would otherwise buffer the stream.
  'x-accel-buffering': 'no',
  // A stream ended on shutdown ends its connection too (an idle keep-alive connection would hold
  // the server's close for its timeout).
  connection: 'close',
};

/**
 * Where the stream starts: Last-Event-ID (what EventSource sends on reconnect) over ?after=. A
 * start past the newest event is refused (EventService.checkStart): it is an id from before a restore.
 */
function startAfter(events: EventService, header: string | undefined, after: number | undefined): number | undefined {
  const instead = 'Reconnect without it (only new events), or with after=<an event id you have>';
  if (header !== undefined) {
    if (!EVENT_ID.test(header.trim())) throw invalid('Last-Event-ID header must be an event id (the decimal id of a feed event, e.g. "1042")');
    const seq = Number(header.trim());
    events.checkStart(seq, `Last-Event-ID ${seq}`, instead);
    return seq;
  }
  if (after !== undefined) events.checkStart(after, `after=${after}`, instead);
  return after;
}

export function registerEventStream(r: ApiRouter, deps: HttpDeps): void {
  const { eventHub, events } = deps.services;
  r.add(
    {
      method: 'get', path: '/events/stream', operationId: 'streamEvents', tag: 'events', access: { permission: 'events:read' },
      summary:
        'The event feed live, as Server-Sent Events (text/event-stream), in feed order. Resume after a dropped connection by sending the last id ' +
        'seen as Last-Event-ID (or ?after=): nothing is missed or repeated; an id past the newest event (one kept from before a restore) gives 400. ' +
        'New events arrive within 100 ms of their commit. ' +
        `At most ${MAX_STREAMS_PER_CREDENTIAL} open streams per key or session (429 beyond); a reader that stops reading while events wait is disconnected and should resume`,
      query: Query,
      headers: [{ name: 'Last-Event-ID', required: false, description: 'The id of the last event received; the stream starts after it (sent by EventSource on reconnect)' }],
      responses: {
        200: { description: 'The stream (kept open)', schema: StreamSchema, contentType: 'text/event-stream' },
        429: { description: `Already ${MAX_STREAMS_PER_CREDENTIAL} open streams for this credential (Retry-After)` },
      },
    },
    (c, { query, principal }) => {
      const after = startAfter(events, requestHeader(c, 'last-event-id'), query.after);
      // HEAD runs this GET handler and drops the body unread: a stream opened for it would never end.
      if (c.req.method === 'HEAD') return c.body(null, 200, STREAM_HEADERS);
      // On the node server: a stalled reader is cut by destroying its socket, and a client that
      // leaves before its stream is read from is forgotten (nothing else would cancel its stream).
      const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
      if (outgoing?.destroyed) return c.body(null, 200, STREAM_HEADERS);
      // Asked at every ping: a key revoked or a session ended while streaming ends the stream.
      const stillValid = () => {
        try {
          return authenticate(c, deps).credentialId === principal.credentialId;
        } catch {
          return false;
        }
      };
      // The server allows half-open connections (a client that ends its side after a complete
      // request still gets its answer), so a client leaving is seen as the end of its side, not
      // only as the close that would otherwise come with the next write: an SSE client that ends
      // its side is gone.
      const onClientGone = (gone: () => void) => {
        outgoing!.once('close', gone);
        outgoing!.socket?.once('end', () => outgoing!.destroy());
      };
      const node = outgoing ? { disconnect: () => outgoing.destroy(), onClientGone } : {};
      const body = eventHub.open(principal, after, { stillValid, ...node });
      // The connection's idle timeout (--idle-timeout-ms, which may be shorter than the ping
      // interval) would cut a quiet stream. The stream bounds itself instead: a ping every PING_MS,
      // and a reader that takes nothing for a ping interval while its queue is full is cut.
      outgoing?.socket?.setTimeout(0);
      return c.body(body, 200, STREAM_HEADERS);
    },
  );
}
