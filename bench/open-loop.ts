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
import http from 'node:http';

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
  /** Connection errors and timeouts (a timeout counts in both, as autocannon counts it). */
  errors: number;
  timeouts: number;
  /** How late the generator issued requests against the schedule, ms: large means it, not the server, lagged. */
  lateP99: number;
  lateMax: number;
}

export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const origin = new URL(o.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const status = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  let errors = 0;
  let timeouts = 0;
  const intervalMs = 1000 / o.rate;
  const late = new Float64Array(Math.ceil(o.rate * o.durationSec) + 2);
  let k = 0;
  let inFlight = 0;
  let issuing = true;
  const t0 = performance.now();
  const end = t0 + o.durationSec * 1000;

  return new Promise((resolve) => {
    const finish = () => {
      if (issuing || inFlight > 0) return;
      agent.destroy();
      const sorted = late.subarray(0, k).sort();
      const at = (q: number) => (k === 0 ? NaN : sorted[Math.min(k - 1, Math.floor(q * k))]!);
      resolve({ status, errors, timeouts, lateP99: at(0.99), lateMax: at(1) });
    };

    const send = (due: number) => {
      const r = o.next();
      const start = performance.now();
      late[k] = start - due;
      inFlight++;
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        inFlight--;
        finish();
      };
      const fail = () => {
        if (settled) return;
        errors++;
        settle();
      };
      const headers = r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) };
      const req = http.request(
        { host: origin.hostname, port: origin.port, method: r.method, path: r.path, headers, agent, timeout: o.timeoutSec * 1000 },
        (res) => {
          res.on('end', () => {
            if (settled) return;
            const cls = `${Math.floor((res.statusCode ?? 0) / 100)}xx`;
            if (cls in status) status[cls as keyof typeof status]++;
            // From when the request was due, not when it went out: a generator that fell behind
            // must not hide the wait (coordinated omission), as wrk2 measures.
            o.onResponse(performance.now() - due);
            settle();
          });
          res.on('error', fail);
          res.on('close', fail); // closed before its end: counted as an error (no-op after 'end')
          res.resume();
        },
      );
      req.on('timeout', () => {
        if (!settled) timeouts++;
        req.destroy(new Error('request timed out'));
      });
      req.on('error', fail);
      req.end(r.body);
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
