// Prometheus metrics (docs/decisions.md §11), with prom-client. Each server has a registry of its own
// rather than prom-client's global one, so that tests can build many apps in one process and a
// metric is never registered twice.
//
// Labels are bounded: `route` is a route template (`/api/v2/recordings/{id}`) or `unmatched`, never
// a path (a path holds ids: one series per recording would grow without end); `method` is one of
// the methods Node's parser accepts; `status` a number. The latency histogram leaves `status` out,
// so it has one set of buckets per route and method; the counter has the status.
import fs from 'node:fs';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prom-client';
import type { MetricsStore } from '../store/metrics-store';
import { LibraryCount } from './library-count';

/** What a delivery attempt (or a claim that closed a delivery) came to. */
export type DeliveryOutcomeLabel = 'delivered' | 'retry' | 'failed' | 'disabled';
const OUTCOMES: readonly DeliveryOutcomeLabel[] = ['delivered', 'retry', 'failed', 'disabled'];

/** Latency buckets in seconds: the API answers most reads in well under a millisecond. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly library: LibraryCount;

  constructor(store: MetricsStore, dbFile: string) {
    const registers = [this.registry];
    const library = (this.library = new LibraryCount(dbFile, store));
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'reclib_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'reclib_http_request_duration_seconds',
      help: 'Time from the request reaching the server to the last byte of the answer, by method and route template',
      labelNames: ['method', 'route'],
      buckets: BUCKETS,
      registers,
    });
    this.deliveries = new Counter({
      name: 'reclib_deliveries_total',
      help: 'Webhook delivery outcomes: delivered, retry (failed, another try is scheduled), failed (no tries left), disabled (subscription off)',
      labelNames: ['outcome'],
      registers,
    });
    for (const outcome of OUTCOMES) this.deliveries.inc({ outcome }, 0);
    new Gauge({
      name: 'reclib_recordings',
      help: 'Recordings in the library (all accounts; deleted ones not counted)',
      registers,
      async collect() {
        this.set(await library.count());
      },
    });
    new Gauge({
      name: 'reclib_outbox_queued',
      help: 'Webhook deliveries waiting to be sent or retried',
      registers,
      collect() {
        this.set(store.queuedDeliveries());
      },
    });
    new Gauge({
      name: 'reclib_db_size_bytes',
      help: 'Size of the SQLite database file',
      registers,
      collect() {
        this.set(fileSize(dbFile));
      },
    });
    new Gauge({
      name: 'reclib_db_wal_size_bytes',
      help: 'Size of the SQLite write-ahead log (-wal file); it grows until a checkpoint lets it start over',
      registers,
      collect() {
        this.set(fileSize(`${dbFile}-wal`));
      },
    });
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status });
    this.latency.observe({ method, route }, seconds);
  }

  delivery(outcome: DeliveryOutcomeLabel): void {
    this.deliveries.inc({ outcome });
  }

  /** Ends the counting worker (server shutdown). */
  stop(): Promise<void> {
    return this.library.stop();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

function fileSize(file: string): number {
  if (file === ':memory:') return 0;
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // no WAL file yet (or it was just removed by a truncating checkpoint)
  }
}
