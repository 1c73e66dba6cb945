// GET /metrics (docs/decisions.md §11): Prometheus text format, registered only when --metrics-token is set
// (otherwise the path is a 404 like any unknown one), and answered only to `Authorization: Bearer
// <token>`. The figures (library size, queue depth, latency per route) are not for everyone who can
// reach the port, and a scrape costs a few queries.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import type { Metrics } from '../observe/metrics';
import type { AppEnv } from './env';
import { requestHeader } from './node-request';
import { markRoute } from './request-observer';
import { BEARER, setRequestId } from './router';

export const METRICS_PATH = '/metrics';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function registerMetricsRoute(
  app: Hono<AppEnv>,
  metrics: Metrics,
  token: string,
  refuse: (c: Context<AppEnv>, message: string) => Response,
): void {
  // Compared as digests: timingSafeEqual needs equal lengths, and the digest hides the token's length.
  // The scheme is read as the API reads it (case-insensitive, RFC 9110 §11.1).
  const expected = digest(token);
  app.get(METRICS_PATH, async (c) => {
    setRequestId(c);
    markRoute(c, METRICS_PATH);
    const given = BEARER.exec(requestHeader(c, 'authorization') ?? '')?.[1];
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="metrics"');
      return refuse(c, 'GET /metrics needs Authorization: Bearer <the --metrics-token value>');
    }
    const text = await metrics.text();
    return c.body(text, 200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
  });
}
