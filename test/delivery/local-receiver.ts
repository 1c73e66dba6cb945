// A real node:http server on a loopback address that records what it receives and answers as
// each test says (after svix's test receiver). Close it in `after`/`finally`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LocalReceiver {
  readonly port: number;
  /** `http://<host>:<port>` */
  readonly origin: string;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** `answer` is called once the request body has been read; it may also never answer. */
export async function startReceiver(
  answer: (req: ReceivedRequest, res: http.ServerResponse) => void,
  host = '127.0.0.1',
): Promise<LocalReceiver> {
  const requests: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      answer(received, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo; // listening on TCP, so never a pipe name
  return {
    port,
    origin: `http://${host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port with nothing listening on it (bound, then released). */
export async function unusedPort(host = '127.0.0.1'): Promise<number> {
  const receiver = await startReceiver(() => {}, host);
  await receiver.close();
  return receiver.port;
}
