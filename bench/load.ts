// The load generator: one autocannon run in its own process (run.ts starts it pinned to the
// other core with taskset), printing one JSON result line. Latencies are taken from autocannon's
// per-response event as float milliseconds: its own histogram rounds to whole milliseconds,
// which hides everything interesting about sub-millisecond reads. With `rate` set the run is open
// loop at that offered rate instead (open-loop.ts; autocannon's overallRate sends in bursts).
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import autocannon, { type RequestData } from 'autocannon';
import { openLoop, type PacedRequest } from './open-loop';

export interface LoadSpec {
  /** Origin, e.g. http://127.0.0.1:41234 */
  url: string;
  token?: string;
  durationSec: number;
  connections: number;
  /**
   * Offered requests per second, all connections together: open loop (requests are issued on a
   * fixed schedule whether or not earlier ones were answered). Unset: closed loop, as fast as the
   * server answers.
   */
  rate?: number;
  /**
   * `fixed`: GET `path`; `byId`: GET `path` with `{id}` replaced by a random id; `create`: POST bodies;
   * `sequence`: the requests of `dataFile` (SequenceRequest[]), each sent once, in order (edits, deletes).
   */
  mode: 'fixed' | 'byId' | 'create' | 'sequence';
  path: string;
  /** JSON array of ids (byId), of request bodies (create) or of SequenceRequest (sequence). */
  dataFile?: string;
  /** Idempotency-Key prefix, unique per run and round (create). */
  keyPrefix?: string;
  /** The pid answering, and the core it is pinned to: its CPU use during the run is reported. */
  serverPid?: number;
  serverCore?: number;
  /** The core this generator is pinned to. */
  loaderCore?: number;
}

export interface LoadResult {
  requests: number;
  durationMs: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Responses by status class, and connection errors / timeouts. */
  status: Record<string, number>;
  errors: number;
  timeouts: number;
  /** CPU the generator itself used, as a share of one core: near 100% means it, not the server, was the limit. */
  loaderCpu: number;
  /** CPU the server used (% of one core): below ~90% the server was not the bottleneck. */
  serverCpu: number;
  /** CPU other processes took on the server's core (%): noise from a shared machine. */
  otherCpuOnServerCore: number;
  /** CPU other processes took on the generator's core (%): when high, the generator was starved. */
  otherCpuOnLoaderCore: number;
  /** Time the server's core sat idle waiting for disk reads or writes (%). */
  ioWaitOnServerCore: number;
  /** Open-loop runs only: the offered rate, and how late (ms) the generator issued requests against its schedule. */
  offeredRps?: number;
  lateP99?: number;
  lateMax?: number;
}

/** One prepared request of a `sequence` run: an edit or a delete of a known recording and revision. */
export interface SequenceRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a process, in ms. */
function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** Busy and iowait time of one core since boot, in ms (busy: user, nice, system, irq, softirq, steal). */
function coreMs(core: number): { busy: number; iowait: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith(`cpu${core} `));
  if (!line) return { busy: NaN, iowait: NaN };
  const [, user, nice, system, , iowait, irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return { busy: (user! + nice! + system! + irq! + softirq! + steal!) * TICK_MS, iowait: iowait! * TICK_MS };
}

type CpuShares = Pick<LoadResult, 'serverCpu' | 'otherCpuOnServerCore' | 'otherCpuOnLoaderCore' | 'ioWaitOnServerCore'>;

/** Starts measuring; the returned function gives the CPU shares since then. */
function cpuProbe(spec: LoadSpec): () => CpuShares {
  const { serverPid: pid, serverCore: core, loaderCore } = spec;
  if (pid === undefined || core === undefined || loaderCore === undefined) {
    return () => ({ serverCpu: NaN, otherCpuOnServerCore: NaN, otherCpuOnLoaderCore: NaN, ioWaitOnServerCore: NaN });
  }
  const p0 = processCpuMs(pid);
  const c0 = coreMs(core);
  const l0 = coreMs(loaderCore);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const wall = performance.now() - t0;
    const server = processCpuMs(pid) - p0;
    const self = process.cpuUsage(self0);
    const pct = (ms: number) => Math.max(0, Math.round((ms / wall) * 100));
    const c1 = coreMs(core);
    return {
      serverCpu: pct(server),
      otherCpuOnServerCore: pct(c1.busy - c0.busy - server),
      otherCpuOnLoaderCore: pct(coreMs(loaderCore).busy - l0.busy - (self.user + self.system) / 1000),
      ioWaitOnServerCore: pct(c1.iowait - c0.iowait),
    };
  };
}

const MAX_SAMPLES = 4_000_000;

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function requestsFor(spec: LoadSpec): RequestData & { setupRequest?: (r: RequestData) => RequestData } {
  const headers: Record<string, string> = spec.token ? { authorization: `Bearer ${spec.token}` } : {};
  if (spec.mode === 'fixed') return { method: 'GET', path: spec.path, headers };
  const data = JSON.parse(fs.readFileSync(spec.dataFile!, 'utf8')) as unknown[];
  if (data.length === 0) throw new Error(`${spec.dataFile} is empty`);
  if (spec.mode === 'byId') {
    const ids = (data as string[]).map((id) => spec.path.replace('{id}', encodeURIComponent(id)));
    return {
      method: 'GET',
      headers,
      setupRequest: (r) => ({ ...r, path: ids[Math.floor(Math.random() * ids.length)]! }),
    };
  }
  if (spec.mode === 'sequence') {
    // Each request once: a delete or an If-Match edit cannot be repeated. Running out wraps around,
    // and the repeats fail (410, 412), which the run reports.
    const sequence = data as SequenceRequest[];
    let k = 0;
    return {
      method: 'GET',
      headers,
      setupRequest: (r) => {
        const q = sequence[k++ % sequence.length]!;
        return { ...r, method: q.method, path: q.path, headers: { ...headers, ...q.headers }, body: q.body ?? '' };
      },
    };
  }
  const bodies = data.map((b) => JSON.stringify(b));
  let n = 0;
  return {
    method: 'POST',
    path: spec.path,
    setupRequest: (r) => {
      n++;
      return {
        ...r,
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': `${spec.keyPrefix ?? 'bench'}-${n}` },
        body: bodies[n % bodies.length]!,
      };
    },
  };
}

type Request = ReturnType<typeof requestsFor>;

/** What a driver reports besides the latencies it records. */
interface Driven {
  status: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
  errors: number;
  timeouts: number;
  /** The seconds to divide the request count by (undefined: wall time). */
  seconds?: number;
  open?: Pick<LoadResult, 'offeredRps' | 'lateP99' | 'lateMax'>;
}

/** Closed loop: each connection sends its next request when the previous one is answered. */
async function closedLoop(spec: LoadSpec, request: Request, record: (ms: number) => void): Promise<Driven> {
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSec,
    timeout: 10,
    requests: [request],
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => record(responseTime));
  const r = await instance;
  return {
    status: { '1xx': r['1xx'], '2xx': r['2xx'], '3xx': r['3xx'], '4xx': r['4xx'], '5xx': r['5xx'] },
    errors: r.errors,
    timeouts: r.timeouts,
    // autocannon's own duration (seconds) excludes process and connection start-up.
    seconds: r.duration > 0 ? r.duration : undefined,
  };
}

async function pacedLoop(spec: LoadSpec, request: Request, rate: number, record: (ms: number) => void): Promise<Driven> {
  const next = (): PacedRequest => {
    const r = request.setupRequest ? request.setupRequest(request) : request;
    return { method: r.method ?? 'GET', path: r.path ?? '/', headers: r.headers ?? {}, body: r.body };
  };
  const o = await openLoop({ url: spec.url, connections: spec.connections, durationSec: spec.durationSec, rate, timeoutSec: 10, next, onResponse: record });
  // Requests are issued over exactly durationSec; the last answers may arrive just after.
  return { ...o, seconds: spec.durationSec, open: { offeredRps: rate, lateP99: o.lateP99, lateMax: o.lateMax } };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const samples = new Float64Array(MAX_SAMPLES);
  let count = 0;
  const record = (ms: number) => {
    if (count < MAX_SAMPLES) samples[count++] = ms;
  };
  const request = requestsFor(spec);
  const cpu0 = process.cpuUsage();
  const probe = cpuProbe(spec);
  const t0 = performance.now();
  const d = spec.rate !== undefined ? await pacedLoop(spec, request, spec.rate, record) : await closedLoop(spec, request, record);
  const wallMs = performance.now() - t0;
  const serverSide = probe();
  const cpu = process.cpuUsage(cpu0);
  const sorted = samples.subarray(0, count).sort();
  const s = d.status;
  const total = s['1xx'] + s['2xx'] + s['3xx'] + s['4xx'] + s['5xx'];
  return {
    requests: total,
    durationMs: Math.round(wallMs),
    rps: Math.round(total / (d.seconds ?? wallMs / 1000)),
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    max: quantile(sorted, 1),
    status: { '2xx': s['2xx'], '3xx': s['3xx'], '4xx': s['4xx'], '5xx': s['5xx'] },
    errors: d.errors,
    timeouts: d.timeouts,
    loaderCpu: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 100),
    ...serverSide,
    ...d.open,
  };
}

// Run as a process: `node --import tsx bench/load.ts '<LoadSpec JSON>'` prints one result line.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
  runLoad(spec).then(
    (result) => process.stdout.write(JSON.stringify(result) + '\n'),
    (err: unknown) => {
      process.stderr.write(`load: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
