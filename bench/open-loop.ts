// Open-loop load at a fixed offered rate (what wrk2 does): request k is issued at t0 + k / rate
// whether or not the earlier ones have been answered, so latency is what a request meets when the
// server is busy but not overloaded, not the length of a queue the generator itself keeps full.
//
// autocannon's `overallRate` does not do this (autocannon 9, lib/httpClient.js): each connection
// gets an integer quota per 1-second window (setInterval) and sends it back to back, one request
// after the previous response, as soon as the window opens; the windows of all connections start
// in the same tick. A second's requests therefore arrive in one burst at its start and queue as in
// a saturated closed loop. Its coordinated-omission correction only touches its own histogram (with
// an expected interval of ceil(1 / rate) = 1 ms), never the 'response' event we record.
//
// The client is a plain socket per connection reading into one reused buffer (net's `onread`),
// not node:http. With node:http every response chunk is a new Buffer; at a search's ~77 KB per
// answer that external memory made V8 run a mark-compact every 150-500 ms, and each stopped the
// generator for 10-20 ms (seen with --trace-gc). Requests due meanwhile went out late in a burst,
// and the p99 measured those pauses (generator lateness p99 ~9 ms, max ~20 ms) rather than the
// server. The answers it reads are what our server sends: HTTP/1.1 with Content-Length.
import net from 'node:net';

export interface PacedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface OpenLoopOptions {
  url: string;
  /** Most sockets open at once: requests wait for a free one when all are busy (the wait counts). */
  connections: number;
  durationSec: number;
  /** Requests per second, all connections together. */
  rate: number;
  timeoutSec: number;
  next: () => PacedRequest;
  /** Latency of each answered request, ms from when it was due (its place in the schedule) to the end of the response. */
  onResponse: (ms: number) => void;
}

export interface OpenLoopResult {
  status: Record<'1xx' | '2xx' | '3xx' | '4xx' | '5xx', number>;
  /** Connection errors, timeouts and unreadable answers (a timeout counts in both, as autocannon counts it). */
  errors: number;
  timeouts: number;
  /** How late the generator issued requests against the schedule, ms: large means it, not the server, lagged. */
  lateP99: number;
  lateMax: number;
}

type StatusClass = keyof OpenLoopResult['status'];
const HEADER_END = '\r\n\r\n';
/** Longest response head accepted (status line and headers). */
const MAX_HEAD = 16 * 1024;

/** One keep-alive connection carrying one request at a time. */
class Connection {
  private readonly socket: net.Socket;
  private head = '';
  /** Body bytes still to come; -1 while the head is being read. */
  private remaining = -1;
  private statusCode = 0;
  private due = 0;
  private timer: NodeJS.Timeout | undefined;
  busy = false;
  closed = false;

  constructor(
    host: string,
    port: number,
    private readonly timeoutMs: number,
    private readonly done: (c: Connection, due: number, outcome: { statusCode: number } | 'error' | 'timeout') => void,
  ) {
    this.socket = net.connect({ host, port, noDelay: true, onread: { buffer: Buffer.allocUnsafe(256 * 1024), callback: (n, buf) => this.read(n, buf as Buffer) } });
    this.socket.on('error', () => this.fail('error'));
    this.socket.on('close', () => this.fail('error'));
  }

  send(bytes: string | Buffer, due: number) {
    this.busy = true;
    this.due = due;
    this.head = '';
    this.remaining = -1;
    this.timer = setTimeout(() => this.fail('timeout'), this.timeoutMs);
    this.socket.write(bytes);
  }

  close() {
    this.closed = true;
    this.socket.destroy();
  }

  /** Always true: keep reading (false would pause the socket). */
  private read(n: number, buf: Buffer): true {
    this.consume(n, buf);
    return true;
  }

  private consume(n: number, buf: Buffer) {
    if (!this.busy) return this.fail('error'); // bytes nobody asked for
    let bodyBytes = n;
    if (this.remaining < 0) {
      // Only the first bytes become a string (a response head is a few hundred bytes); converting
      // whole chunks would bring back the garbage this client exists to avoid.
      let text = this.head + buf.toString('latin1', 0, Math.min(n, 2048));
      let end = text.indexOf(HEADER_END);
      if (end < 0 && n > 2048) end = (text = this.head + buf.toString('latin1', 0, Math.min(n, MAX_HEAD))).indexOf(HEADER_END);
      if (end < 0) {
        if (this.head.length + n > MAX_HEAD) return this.fail('error');
        this.head = text;
        return;
      }
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(text.slice(0, end + 2));
      if (!m || !length) return this.fail('error');
      this.statusCode = Number(m[1]);
      this.remaining = Number(length[1]);
      bodyBytes = this.head.length + n - (end + HEADER_END.length);
    }
    this.remaining -= bodyBytes;
    if (this.remaining < 0) return this.fail('error'); // more than Content-Length said
    if (this.remaining === 0) this.finish({ statusCode: this.statusCode });
  }

  private fail(outcome: 'error' | 'timeout') {
    if (!this.closed) this.close();
    if (this.busy) this.finish(outcome);
  }

  private finish(outcome: { statusCode: number } | 'error' | 'timeout') {
    clearTimeout(this.timer);
    this.busy = false;
    this.done(this, this.due, outcome);
  }
}

/** The bytes of one request; the headers given plus Host and, with a body, Content-Length. */
function encode(r: PacedRequest, host: string): string | Buffer {
  const lines = [`${r.method} ${r.path} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(r.headers)) lines.push(`${name}: ${value}`);
  if (r.body === undefined) return `${lines.join('\r\n')}\r\n\r\n`;
  const body = typeof r.body === 'string' ? Buffer.from(r.body) : r.body;
  lines.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const origin = new URL(o.url);
  const port = Number(origin.port);
  const status = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  let errors = 0;
  let timeouts = 0;
  const intervalMs = 1000 / o.rate;
  const late = new Float64Array(Math.ceil(o.rate * o.durationSec) + 2);
  let k = 0;
  let inFlight = 0;
  let issuing = true;
  const pool: Connection[] = [];
  /** Requests due while every connection was busy, oldest first. */
  const waiting: Array<{ bytes: string | Buffer; due: number }> = [];
  const t0 = performance.now();
  const end = t0 + o.durationSec * 1000;

  return new Promise((resolve) => {
    const finish = () => {
      if (issuing || inFlight > 0) return;
      for (const c of pool) c.close();
      const sorted = late.subarray(0, k).sort();
      const at = (q: number) => (k === 0 ? NaN : sorted[Math.min(k - 1, Math.floor(q * k))]!);
      resolve({ status, errors, timeouts, lateP99: at(0.99), lateMax: at(1) });
    };

    const done = (c: Connection, due: number, outcome: { statusCode: number } | 'error' | 'timeout') => {
      inFlight--;
      if (outcome === 'timeout') timeouts++;
      if (typeof outcome === 'object') {
        const cls = `${Math.floor(outcome.statusCode / 100)}xx`;
        if (cls in status) status[cls as StatusClass]++;
        // From when the request was due, not when it went out: a generator that fell behind
        // must not hide the wait (coordinated omission), as wrk2 measures.
        o.onResponse(performance.now() - due);
      } else errors++;
      if (c.closed) pool.splice(pool.indexOf(c), 1);
      const queued = waiting.shift();
      if (queued) dispatch(queued.bytes, queued.due);
      finish();
    };

    const dispatch = (bytes: string | Buffer, due: number) => {
      let c = pool.find((x) => !x.busy && !x.closed);
      if (!c && pool.length < o.connections) pool.push((c = new Connection(origin.hostname, port, o.timeoutSec * 1000, done)));
      if (c) c.send(bytes, due);
      else waiting.push({ bytes, due });
    };

    const send = (due: number) => {
      late[k] = performance.now() - due;
      inFlight++;
      dispatch(encode(o.next(), origin.host), due);
    };

    // Timers fire at ~1 ms granularity: each tick issues every request already due, then sleeps
    // until the next one is.
    const tick = () => {
      for (;;) {
        const due = t0 + k * intervalMs;
        if (due >= end) {
          issuing = false;
          break;
        }
        if (due > performance.now()) break;
        send(due);
        k++;
      }
      if (issuing) setTimeout(tick, Math.max(0, t0 + k * intervalMs - performance.now()));
      else finish();
    };
    tick();
  });
}
