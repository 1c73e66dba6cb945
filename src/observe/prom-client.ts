// The parts of prom-client reclib uses, in one module, and every import of prom-client goes through
// it. The build makes it a program of its own (dist/prom-client.program.cjs, build.mjs:
// `LAZY_PROGRAMS`), loaded with V8's code cache when metrics.ts is, which only a server with
// RECLIB_METRICS_TOKEN imports (load-metrics.ts): ~100 KB with @opentelemetry/api that a start read
// and kept for nothing. prom-client's own registry is never used (metrics.ts makes one per server).
export { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
