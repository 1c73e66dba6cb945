// v1 listEvents: GET /events?after=<seq>&limit=<n> → { events, cursor, hasMore } (docs/decisions.md §7).
// The same events as the v2 feed; the cursor is the integer event id.
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { queryInt } from '../schemas';
import { EventSchema } from '../schemas/events';
import { Int } from '../schemas/numbers';

/** v1 allows any limit >= 0; larger pages are served as pages of this size (hasMore says more). */
const MAX_PAGE = 1000;

const Query = v.object({
  after: v.optional(v.pipe(queryInt(0, Number.MAX_SAFE_INTEGER), v.description('The cursor of the previous page; default 0 (the start)')), '0'),
  limit: v.optional(v.pipe(queryInt(0, Number.MAX_SAFE_INTEGER), v.description(`Default 100; values above ${MAX_PAGE} return ${MAX_PAGE}`)), '100'),
});

export function registerEventsV1(r: ApiRouter, deps: HttpDeps): void {
  const { events } = deps.services;
  r.add(
    {
      method: 'get', path: '/events', operationId: 'listEvents', tag: 'events', access: { permission: 'events:read' },
      summary:
        'Recording events with an id above `after` (integer >= 0, default 0), oldest first; `limit` integer >= 0, default 100, ' +
        `pages above ${MAX_PAGE} are served as ${MAX_PAGE}. Persist the returned cursor after processing the page. ` +
        'An `after` past the newest event (one kept from before a restore) gives 400',
      query: Query,
      responses: {
        200: { description: 'A page of events', schema: v.object({ events: v.array(EventSchema), cursor: Int, hasMore: v.boolean() }) },
      },
    },
    (c, { query, principal }) => c.json(events.feedV1(principal.accountId, query.after, Math.min(query.limit, MAX_PAGE))),
  );
}
