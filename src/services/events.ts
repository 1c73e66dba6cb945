// Recording events. emit() must be called inside the Writer transaction of the change it
// describes; listeners (the webhook outbox) run in that same transaction, so an event and its
// deliveries are committed together with the change or not at all.
import type { Core } from '../context';
import { invalid } from '../errors';
import { EventStore, type EventRow } from '../store/event-store';

export const EVENT_TYPES = ['recording.created', 'recording.updated', 'recording.transcript_ready', 'recording.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The default webhook payload and the feed item: no text, no audio, no credentials. */
export interface EventJson {
  id: string;
  type: string;
  recordingId: string;
  revision: number;
  createdAt: number;
}

export const eventJson = (e: EventRow): EventJson => ({
  id: String(e.seq),
  type: e.type,
  recordingId: e.recording_id,
  revision: e.revision,
  createdAt: e.created_at,
});

/** Called inside the emitting transaction for every event. Must not do I/O beyond the db. */
export type EventListener = (event: EventRow) => void;

const CURSOR_PREFIX = 'evc1.';

/** v2 feed cursors are opaque: a versioned, base64url-wrapped event sequence number. */
export const encodeEventCursor = (seq: number): string => CURSOR_PREFIX + Buffer.from(`seq:${seq}`).toString('base64url');

export function decodeEventCursor(cursor: string): number {
  if (cursor.startsWith(CURSOR_PREFIX)) {
    const m = /^seq:(\d{1,16})$/.exec(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
    if (m?.[1] && encodeEventCursor(Number(m[1])) === cursor) return Number(m[1]);
  }
  throw invalid('cursor: not a cursor returned by GET /events');
}

/** The words of the refusal of a start past the feed's end (checkStart): `reclib listen` recognises it by them. */
export const PAST_THE_END = 'is after the newest event';

export class EventService {
  readonly store: EventStore;
  private readonly listeners: EventListener[] = [];

  constructor(private readonly core: Core) {
    this.store = new EventStore(core.db);
  }

  /** Registers a listener that runs inside each emitting transaction (e.g. the outbox). */
  onEvent(listener: EventListener): void {
    this.listeners.push(listener);
  }

  /** Records an event. Call only inside Writer.write() together with the change itself. */
  emit(accountId: string, type: EventType, recordingId: string, revision: number, now: number): EventRow {
    const row = this.store.insert(accountId, type, recordingId, revision, now);
    for (const listener of this.listeners) listener(row);
    return row;
  }

  /**
   * Refuses a starting point past the newest event: no feed gave it out. It comes from before a
   * `reclib restore` (ids go back to the backup's), and starting there would silently skip the
   * events that take those ids again. Compared with the server's newest id, not the account's:
   * ids are one sequence for every account, and that maximum only grows, so a write committed
   * meanwhile cannot make a start we gave out look past the end. `named` is how the request gave
   * it (e.g. "Last-Event-ID 61009"), `instead` what to do.
   */
  checkStart(afterSeq: number, named: string, instead: string): void {
    if (afterSeq === 0) return;
    const newest = this.store.lastSeq();
    if (afterSeq > newest) {
      throw invalid(`${named} ${PAST_THE_END} (${newest}): was the database restored from a backup? ${instead}`);
    }
  }

  /** v2 feed page: events after the cursor; nextCursor is never null (docs/decisions.md §5). */
  feed(accountId: string, cursor: string | undefined, limit: number): { events: EventJson[]; nextCursor: string } {
    const after = cursor === undefined ? 0 : decodeEventCursor(cursor);
    const rows = this.store.page(accountId, after, limit);
    const last = rows[rows.length - 1];
    // Only an empty page can have started past the end (a page with events started before one).
    if (!last) this.checkStart(after, 'cursor: it points to an event id that', 'Start again without a cursor (from the first event)');
    return { events: rows.map(eventJson), nextCursor: last ? encodeEventCursor(last.seq) : (cursor ?? encodeEventCursor(0)) };
  }

  /** v1 feed page: integer cursor and hasMore. */
  feedV1(accountId: string, after: number, limit: number): { events: EventJson[]; cursor: number; hasMore: boolean } {
    const rows = this.store.page(accountId, after, limit + 1);
    if (rows.length === 0) this.checkStart(after, `after=${after}`, 'Start again with after=0, or with an event id you have');
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { events: page.map(eventJson), cursor: last ? last.seq : after, hasMore: rows.length > limit };
  }
}
