// The recording as stored and as v2 shows it. One row type and one row → JSON mapping, so the v1
// layer can map the very same row to its own shape (kind, source, processing, audioAssets).
import { AppError } from '../errors';
import { sha256Hex } from '../ids';
import type { RecordingRow, RecordingStatus } from '../store/recording-row';
import type { RecordingType } from './device-inputs';

export { RECORDING_STATUSES, type RecordingRow, type RecordingStatus } from '../store/recording-row';

/**
 * The listing sort key (recordings.seq, the FTS rowid): (MAX_RECORDED_AT - recordedAt) * SLOTS + k,
 * unique, so "newest first" is ascending order. Within one capture millisecond k counts down from
 * SLOTS - 1, so a later created recording sorts first. See schema.sql for why ascending.
 */
export const SEQ_SLOTS = 1024;
/**
 * Largest accepted recordedAt: 2^43 - 1 ms (year 2248), so every sort key stays below 2^53 and is
 * an exact JavaScript number.
 */
export const MAX_RECORDED_AT = 2 ** 43 - 1;

/** The sort keys of one capture millisecond: [first, last]. */
export const slotRange = (recordedAt: number): [number, number] => {
  const base = (MAX_RECORDED_AT - recordedAt) * SEQ_SLOTS;
  return [base, base + SEQ_SLOTS - 1];
};

/** The sort keys of capture times from..to (inclusive, clamped to 0..MAX_RECORDED_AT); null when empty. */
export function seqRange(from: number | undefined, to: number | undefined): [number, number] | null {
  const lo = Math.max(0, from ?? 0);
  const hi = Math.min(MAX_RECORDED_AT, to ?? MAX_RECORDED_AT);
  if (lo > hi) return null;
  return [slotRange(hi)[0], slotRange(lo)[1]];
}

export interface AudioRef {
  clientId: string;
  fileId: string;
  /** When the client reported the reference (v1 audioAssets). */
  reportedAt: number;
}


/** The v2 recording (docs/decisions.md §13, §5), fields in the order listed there. */
export interface RecordingJson {
  id: string;
  type: RecordingType;
  title: string;
  transcript: string;
  summary: string;
  recordedAt: number;
  updatedAt: number;
  revision: number;
  status: RecordingStatus;
  pinned: boolean;
  audio: Array<{ clientId: string; fileId: string }>;
  deviceId?: string;
  externalId?: string;
}

export const audioRefs = (row: Pick<RecordingRow, 'type' | 'audio'>): AudioRef[] =>
  row.type === 'clip' || row.audio === '[]' ? [] : (JSON.parse(row.audio) as AudioRef[]);

export function recordingJson(row: RecordingRow): RecordingJson {
  const json: RecordingJson = {
    id: row.id,
    type: row.type,
    title: row.title,
    transcript: row.transcript,
    summary: row.summary,
    recordedAt: row.recorded_at,
    updatedAt: row.updated_at,
    revision: row.revision,
    status: row.status,
    pinned: row.pinned === 1,
    audio: audioRefs(row).map((a) => ({ clientId: a.clientId, fileId: a.fileId })),
  };
  if (row.device_id !== null) json.deviceId = row.device_id;
  if (row.external_id !== null) json.externalId = row.external_id;
  return json;
}

/**
 * recordingJson() in SQL, as `{"recording":{…}}` text: the same keys in the same order and the same
 * bytes as JSON.stringify({ recording: recordingJson(row) }) for every row this program writes
 * (integer times and revisions below 2^53, audio as JSON.stringify stored it; the table is not
 * STRICT, so a row written by hand with a REAL time or odd audio JSON could differ). json_quote
 * escapes as JSON.stringify does for every code point, and our text holds no lone surrogates
 * (better-sqlite3 hands strings to SQLite as UTF-8, a lone surrogate as U+FFFD). The audio
 * references are copied as the JSON text JSON.stringify stored them (`->`, not `->>`: a lone
 * surrogate in a client id is kept there as \udc00, which `->>` would decode). For GET by id,
 * the hot read: one text column instead of a 25-column row object, its mapping and its stringify
 * took 12 instead of 23 µs a lookup at 100,000 recordings. Change both together:
 * test/services/recording-json-sql.test.ts holds them to the same bytes.
 */
export const RECORDING_ANSWER_SQL = `'{"recording":{"id":' || json_quote(id) || ',"type":' || json_quote(type)
  || ',"title":' || json_quote(title) || ',"transcript":' || json_quote(transcript) || ',"summary":' || json_quote(summary)
  || ',"recordedAt":' || recorded_at || ',"updatedAt":' || updated_at || ',"revision":' || revision
  || ',"status":' || json_quote(status) || ',"pinned":' || iif(pinned = 1, 'true', 'false')
  || ',"audio":' || iif(type = 'clip' OR audio = '[]', '[]',
       (SELECT json_group_array(json_object('clientId', a.value -> 'clientId', 'fileId', a.value -> 'fileId')) FROM json_each(audio) a))
  || iif(device_id IS NULL, '', ',"deviceId":' || json_quote(device_id))
  || iif(external_id IS NULL, '', ',"externalId":' || json_quote(external_id)) || '}}'`;

/** A recording's GET answer as RECORDING_ANSWER_SQL writes it, with what the route needs besides. */
export interface RecordingAnswer {
  body: string;
  revision: number;
  deleted_at: number | null;
}

/** What a caller without recordings:read gets back from a write (docs/decisions.md §13). */
export const recordingRef = (row: RecordingRow): { id: string; revision: number } => ({ id: row.id, revision: row.revision });

/** JSON with object keys sorted at every level and undefined members dropped: key order is not meaning. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export const bodyHash = (body: unknown): string => sha256Hex(canonicalJson(body));

/** 412 when the caller's If-Match revision is not the stored one. */
export function checkRevision(row: RecordingRow, expected: number): void {
  if (row.revision !== expected) {
    throw new AppError('precondition_failed', `If-Match revision ${expected} is stale: recording ${row.id} is at revision ${row.revision}; read it again`);
  }
}
