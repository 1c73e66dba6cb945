// A real webhook receiver on 127.0.0.1 (after svix's test receiver): it records every request's
// raw body and headers and answers what the test says — a status, a status later, or never.
// It also counts requests in flight, so tests can see the sender's concurrency from outside. A test
// about the wire itself (headers, redirects, slow bodies) answers through the response object.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body as received (verify signatures over this, never a re-serialisation). */
  body: string;
  /** Real time the request body was complete. */
  receivedAt: number;
  /** Real time the answer went out (or the connection closed); null while open. */
  answeredAt: number | null;
  /** The status the receiver answered with; null if it never answered (hung, or cut first). */
  status: number | null;
}

/** A status now, a status later (the promise), 'hang': never answer, or a function that writes the answer itself. */
export type Answer = number | Promise<number> | 'hang' | ((res: http.ServerResponse) => void);

export interface Receiver {
  /** http://<host>:<port>/hook */
  readonly url: string;
  /** http://<host>:<port> */
  readonly origin: string;
  readonly port: number;
  readonly requests: Received[];
  /** Decides the answer to the n-th request (0-based). Default: 200. Replace at will. */
  answer: (req: Received, n: number) => Answer;
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Resolves once `n` requests in all have arrived; rejects after `timeoutMs` of real time. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Parsed JSON bodies in arrival order. */
  bodies<T = Record<string, unknown>>(): T[];
  close(): Promise<void>;
}

/** A response the test releases later: `answer = () => held.promise`, then `held.release(200)`. */
export function heldAnswer(): { promise: Promise<number>; release(status: number): void } {
  let release!: (status: number) => void;
  const promise = new Promise<number>((resolve) => (release = resolve));
  return { promise, release };
}

export async function startReceiver(answer: Receiver['answer'] = () => 200, host = '127.0.0.1'): Promise<Receiver> {
  const requests: Received[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let open = true;
    const done = (): void => {
      if (!open) return;
      open = false;
      inFlight--;
      received.answeredAt = Date.now();
    };
    const received: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: '', receivedAt: 0, answeredAt: null, status: null };
    res.on('close', done);
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.body = Buffer.concat(chunks).toString('utf8');
      received.receivedAt = Date.now();
      const n = requests.push(received) - 1;
      for (const w of waiters.filter((w) => requests.length >= w.n)) w.resolve();
      const a = receiver.answer(received, n);
      if (a === 'hang') return;
      if (typeof a === 'function') {
        res.on('finish', () => (received.status = res.statusCode));
        return a(res);
      }
      void Promise.resolve(a).then((status) => {
        if (!open) return;
        received.status = status;
        res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo; // listening on TCP, so never a pipe name
  const origin = `http://${host}:${port}`;

  const receiver: Receiver = {
    url: `${origin}/hook`,
    origin,
    port,
    requests,
    answer,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    waitForRequests(n, timeoutMs = 5_000) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${requests.length} of ${n} requests in ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    bodies<T>() {
      return requests.map((r) => JSON.parse(r.body) as T);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** A port with nothing listening on it (bound, then released). */
export async function unusedPort(host = '127.0.0.1'): Promise<number> {
  const receiver = await startReceiver(() => 'hang', host);
  await receiver.close();
  return receiver.port;
}
