// A Server-Sent Events reader over a raw TCP socket: it writes the HTTP request itself and decodes
// the chunked response, so tests see exactly the bytes the server sent, can stop reading the
// socket (a stalled reader) and can drop the connection in the middle of the stream.
import net from 'node:net';

export interface SseMessage {
  id: string;
  event: string;
  data: string;
}

/** Serves `fetch` on a free loopback port (the shared helper, re-exported for the stream tests). */
export { listening } from './node-server';

export class SseReader {
  status = 0;
  headers: Record<string, string> = {};
  /** The decoded response body so far. */
  body = '';
  messages: SseMessage[] = [];
  comments: string[] = [];
  /** The terminating zero-length chunk arrived: the server ended the response cleanly. */
  ended = false;
  /** The socket closed (cleanly or not). */
  closed = false;
  readonly socket: net.Socket;
  private raw = Buffer.alloc(0);
  private headDone = false;
  private parsedUpTo = 0;
  private waiters: Array<() => void> = [];

  private constructor(port: number, path: string, headers: Record<string, string>, paused: boolean) {
    this.socket = net.connect(port, '127.0.0.1');
    const lines = [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Accept: text/event-stream', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (paused) this.socket.pause();
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  /** Connects and waits for the response head. */
  static async open(port: number, path: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const r = new SseReader(port, path, headers, false);
    await r.until(() => r.status !== 0 || r.closed, 'the response head');
    return r;
  }

  /** Connects and never reads the socket (until resume()): a stalled client. */
  static stalled(port: number, path: string, headers: Record<string, string> = {}): SseReader {
    return new SseReader(port, path, headers, true);
  }

  resume(): void {
    this.socket.resume();
  }

  drop(): void {
    this.socket.destroy();
  }

  /** Resolves when `check` holds (re-checked on every arrival), or fails after `ms`. */
  until(check: () => boolean, what: string, ms = 5000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${this.messages.length} messages, body tail ${JSON.stringify(this.body.slice(-200))}`)), ms);
      const waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      };
      this.waiters.push(waiter);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  private onData(chunk: Buffer): void {
    this.raw = Buffer.concat([this.raw, chunk]);
    if (!this.headDone) {
      const end = this.raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...headerLines] = this.raw.subarray(0, end).toString('latin1').split('\r\n');
      this.status = Number(statusLine.split(' ')[1]);
      for (const line of headerLines) {
        const i = line.indexOf(':');
        this.headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      this.raw = this.raw.subarray(end + 4);
      this.headDone = true;
    }
    if (this.headers['transfer-encoding'] === 'chunked') this.dechunk();
    else {
      this.body += this.raw.toString('utf8');
      this.raw = Buffer.alloc(0);
    }
    this.parse();
    this.notify();
  }

  private dechunk(): void {
    for (;;) {
      const lineEnd = this.raw.indexOf('\r\n');
      if (lineEnd < 0) return;
      const size = parseInt(this.raw.subarray(0, lineEnd).toString('latin1'), 16);
      if (this.raw.length < lineEnd + 2 + size + 2) return;
      if (size === 0) this.ended = true;
      this.body += this.raw.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
      this.raw = this.raw.subarray(lineEnd + 2 + size + 2);
    }
  }

  /** Complete SSE blocks (ending in a blank line) become messages or comments. */
  private parse(): void {
    for (;;) {
      const end = this.body.indexOf('\n\n', this.parsedUpTo);
      if (end < 0) return;
      const block = this.body.slice(this.parsedUpTo, end);
      this.parsedUpTo = end + 2;
      const m: Partial<SseMessage> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) m.id = line.slice(4);
        else if (line.startsWith('event: ')) m.event = line.slice(7);
        else if (line.startsWith('data: ')) m.data = line.slice(6);
      }
      if (m.data !== undefined) this.messages.push({ id: m.id ?? '', event: m.event ?? 'message', data: m.data });
    }
  }
}
