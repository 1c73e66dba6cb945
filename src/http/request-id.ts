// A request's id (docs/decisions.md §4): the client's X-Request-Id when it is well-formed, else a
// new one. A module of its own so that the node server's first answers (direct-health.ts) need
// neither the router nor Hono.
import { newId } from '../ids';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id of a request that sent `incoming` as its X-Request-Id: that one when it is well-formed, else a new one. */
export const requestIdFrom = (incoming: string | undefined): string => (incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newId('req'));
