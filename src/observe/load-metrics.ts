// The Prometheus metrics are loaded only when GET /metrics is configured: src/observe/metrics.ts
// imports prom-client, whose evaluation (with its default collectors) was ~28 ms of the server's
// start on a loaded 2-core machine (CPU profile of `reclib serve`), for a feature that is off
// unless RECLIB_METRICS_TOKEN is set. metrics.ts is evaluated only at this import, and prom-client
// is a program of its own in the bundle (src/observe/prom-client.ts), read only then.
import type { Config } from '../config';
import type { Core } from '../context';
import type { Metrics } from './metrics';
import { MetricsStore } from '../store/metrics-store';

/**
 * When config.metricsToken is set: loads prom-client and returns what builds the server's metrics
 * (synchronously, once the database is open); else undefined, and prom-client stays unloaded.
 */
export async function loadMetrics(config: Pick<Config, 'metricsToken'>): Promise<((core: Pick<Core, 'config' | 'db'>) => Metrics) | undefined> {
  if (!config.metricsToken) return undefined;
  const { Metrics } = await import('./metrics');
  return (core) => new Metrics(new MetricsStore(core.db), core.config.db);
}
