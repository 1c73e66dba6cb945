// v2 GET /events: the account's recording events after an opaque cursor (docs/decisions.md §5).
import * as v from 'valibot';
import type { HttpDeps } from '../env';
import { jsonAnswer, type ApiRouter } from '../router';
import { queryInt } from '../schemas';
import { EventSchema } from '../schemas/events';

const Query = v.object({
  limit: v.optional(v.pipe(queryInt(1, 1000), v.description('Page size 1-1000, default 100')), '100'),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(256, 'must be at most 256 characters'),
      v.description('nextCursor of the previous page; omit to start at the first event'),
    ),
  ),
});

export function registerEvents(r: ApiRouter, deps: HttpDeps): void {
  const { events } = deps.services;
  r.add(
    {
      method: 'get', path: '/events', operationId: 'listEvents', tag: 'events', access: { permission: 'events:read' },
      summary:
        'Recording events, oldest first; limit 1-1000 (default 100). Save nextCursor (never null) after each page and send it as cursor; ' +
        'an empty page means caught up. A cursor not returned by this feed gives 400',
      query: Query,
      responses: { 200: { description: 'A page of events', schema: v.object({ events: v.array(EventSchema), nextCursor: v.string() }) } },
      directAnswer: true,
    },
    (c, { query, principal }) => jsonAnswer(c, events.feed(principal.accountId, query.cursor, query.limit)),
  );
}
