// One live event stream (services/event-stream.ts has the hub that feeds and limits them). The
// feed table is the buffer: the stream remembers only the last event id it queued and reads the
// next page from the database while its queue has room, so a reconnect with the last id seen
// resumes exactly and a slow reader costs no memory beyond one bounded queue. Its reader (the
// HTTP adapter) takes chunks only as the socket drains; a reader that takes nothing for a whole
// ping interval while the queue is full is cut off, and resumes from its last id.
import type { Principal } from '../permissions';
import type { EventRow } from '../store/event-store';
import { eventJson } from './events';

/** Bytes one stream may hold queued (plus the page being added). */
export const STREAM_BUFFER_BYTES = 64 * 1024;
/** Events read from the database at a time. */
const PAGE = 100;

const encoder = new TextEncoder();
const PING = encoder.encode(': ping\n\n');

/** One feed event as an SSE message: its id, its type as the event name, the feed item as data. */
export const sseMessage = (row: EventRow): string => `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(eventJson(row))}\n\n`;

export interface StreamHooks {
  /** Asked at every ping: false (a revoked key, an ended session) ends the stream. */
  stillValid(): boolean;
  /**
   * Drops the connection at once (the HTTP layer destroys the socket). Without it a cut errors
   * the body, which the HTTP adapter reports as a failed response.
   */
  disconnect?: () => void;
  /**
   * Registers `gone`, to be called when the client's connection closes. The body's reader cancels
   * it too, but only once it has started reading: a client that left before that would otherwise
   * keep its stream registered.
   */
  onClientGone?: (gone: () => void) => void;
}

export interface StreamOwner {
  read(accountId: string, afterSeq: number, limit: number): EventRow[];
  release(stream: FeedStream): void;
}

export class FeedStream {
  readonly body: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** Ping intervals in a row that found the queue full with no read in between. */
  private stalledTicks = 0;
  private ended = false;

  constructor(
    readonly principal: Principal,
    private afterSeq: number,
    private readonly owner: StreamOwner,
    private readonly hooks: StreamHooks,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        // Called when the reader took chunks and the queue has room again: progress.
        pull: () => {
          this.stalledTicks = 0;
          this.fill();
        },
        // The client went away (the adapter cancels the body when the socket closes).
        cancel: () => this.finish(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
    );
    hooks.onClientGone?.(() => this.finish());
  }

  /** Queues the events after the last one sent while the queue has room. */
  fill(): void {
    const c = this.controller;
    if (this.ended || !c) return;
    try {
      while ((c.desiredSize ?? 0) > 0) {
        const rows = this.owner.read(this.principal.accountId, this.afterSeq, PAGE);
        const last = rows[rows.length - 1];
        if (!last) return;
        // Revoked or ended since the last look: not one more event (a request is refused at once,
        // so a stream must not go on until its next ping).
        if (!this.hooks.stillValid()) return this.end('close');
        let text = '';
        for (const row of rows) text += sseMessage(row);
        this.afterSeq = last.seq;
        c.enqueue(encoder.encode(text));
        if (rows.length < PAGE) return;
      }
    } catch {
      // The database went away (shutdown) or the stream was closed under us: end this stream only.
      this.end('cut');
    }
  }

  /** The ping interval: a ping, or the end of a stream whose reader stalled or whose credential ended. */
  tick(): void {
    const c = this.controller;
    if (this.ended || !c) return;
    if (!this.hooks.stillValid()) return this.end('close');
    if ((c.desiredSize ?? 0) <= 0) {
      if (++this.stalledTicks >= 2) this.end('cut');
      return;
    }
    c.enqueue(PING);
  }

  /**
   * close: the end of the response (when nothing is queued). cut: the connection is dropped now,
   * as a reader that is not reading would never take the queued bytes; it resumes from its last id.
   */
  end(how: 'close' | 'cut'): void {
    if (this.ended) return;
    const c = this.controller;
    this.finish();
    try {
      if (how === 'close' && (c?.desiredSize ?? 0) >= STREAM_BUFFER_BYTES) c?.close();
      else if (this.hooks.disconnect) this.hooks.disconnect();
      else c?.error(new Error('event stream reader too far behind'));
    } catch {
      // Already closed by the other side.
    }
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.release(this);
  }
}
